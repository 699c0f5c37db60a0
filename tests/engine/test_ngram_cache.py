"""The n-gram cache learned from the chat history: drafts from past chats, forgotten with them.

A real SQLite history in a temp dir, the real engine with the embedded model, and the sync the
engine process runs (:class:`desktop_app.engine_process.history_sync.HistoryNgrams`).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from desktop_app.engine import Engine
from desktop_app.engine.drafters import ngram_store
from desktop_app.engine.drafters.ngram_cache import HISTORY_RULE, NgramCacheDrafter
from desktop_app.engine.drafters.ngram_counts import NgramCounts
from desktop_app.engine_process.history_sync import CACHE_FOLDER, HistoryNgrams, cache_path
from desktop_app.store import History

PHRASE = "the quartz zebra orchestra rehearses marmalade sonatas beneath violet lanterns every Thursday"
NOTE = f"Remember this: {PHRASE}."
KNOWN = 6  # tokens of the note the context ends with; the drafter should propose the rest
FINISHED = {"finish_reason": "stop"}


@pytest.fixture()
def history(tmp_path: Path) -> Iterator[History]:
    store = History(tmp_path / "data" / "history.sqlite3")
    yield store
    store.close()


@pytest.fixture()
def syncer(default_engine: Engine) -> Iterator[tuple[HistoryNgrams, list[str]]]:
    default_engine.ngrams.clear()
    lines: list[str] = []
    ngrams = HistoryNgrams(default_engine, log=lines.append)
    yield ngrams, lines
    ngrams.close()
    default_engine.ngrams.clear()


def _chat(history: History, user: str, answer: str) -> int:
    conversation = history.create_conversation(user[:20])
    history.add_message(conversation.id, "user", user)
    history.add_message(conversation.id, "assistant", answer, FINISHED)
    return conversation.id


def _note(engine: Engine) -> tuple[list[int], list[int]]:
    """The context (ending inside the phrase) and the continuation the history should draft."""
    assert engine.target is not None
    tokens = engine.target.tokenize(NOTE, add_special=False, parse_special=False)
    assert len(tokens) > KNOWN + 8
    return tokens[: KNOWN + 4], tokens[KNOWN + 4 :]


def _proposal(engine: Engine, context: list[int], k: int) -> list[int]:
    return NgramCacheDrafter(engine.ngrams).lookup(context, k)


def _on_disk(engine: Engine, history: History) -> tuple[NgramCounts, dict[int, int]]:
    assert engine.target is not None
    fingerprint = engine.target.vocab_fingerprint
    return ngram_store.load(cache_path(history.path, fingerprint), fingerprint, engine.target.n_vocab)


def test_a_phrase_from_the_history_is_drafted_until_its_conversation_is_deleted(
    default_engine: Engine,
    history: History,
    syncer: tuple[HistoryNgrams, list[str]],
) -> None:
    sync, lines = syncer
    context, rest = _note(default_engine)
    kept = _chat(history, "What is the capital of France?", "The capital of France is Paris.")
    secret = _chat(history, NOTE, f"Noted: {NOTE}")
    history.add_message(kept, "assistant", "a half-streamed answer", None)  # no stats: not ended, not learned
    assert _proposal(default_engine, context, len(rest)) == []

    state = sync.sync_now(history.path)
    assert state is not None
    assert _proposal(default_engine, context, len(rest)) == rest  # seen twice in the history
    counts, manifest = _on_disk(default_engine, history)
    assert counts.chain(context, len(rest), HISTORY_RULE) == rest
    assert {m.id for m in history.messages(secret)} <= set(manifest)
    assert all(m.id not in manifest for m in history.messages(kept) if m.stats is None and m.role == "assistant")

    default_engine.ngrams.learn(default_engine.target.tokenize(NOTE, add_special=False) * 2)  # this run's answer
    history.delete(secret)
    sync.sync_now(history.path, forget_session=True)
    assert _proposal(default_engine, context, len(rest)) == []  # neither the history nor this session drafts it
    counts, manifest = _on_disk(default_engine, history)
    assert counts.chain(context, len(rest), HISTORY_RULE) == []
    assert not {m.id for m in history.messages(secret)} & set(manifest)
    assert {m.id for m in history.messages(kept) if m.stats is not None or m.role == "user"} <= set(manifest)
    assert any("deleted or edited" in line for line in lines)


def test_an_answer_saved_later_is_learned_and_nothing_else_is_redone(
    default_engine: Engine,
    history: History,
    syncer: tuple[HistoryNgrams, list[str]],
) -> None:
    sync, _lines = syncer
    context, rest = _note(default_engine)
    conversation = _chat(history, "Hello", "Hi!")
    first = sync.sync_now(history.path)
    assert first is not None and sync.sync_now(history.path) is first  # nothing new: the same tables, no work
    history.add_message(conversation, "user", NOTE)
    history.add_message(conversation, "assistant", NOTE, FINISHED)
    second = sync.sync_now(history.path)
    assert second is not None and second is not first
    assert _proposal(default_engine, context, len(rest)) == rest
    assert first.counts.chain(context, len(rest), HISTORY_RULE) == []  # the table the engine had was not edited


@pytest.mark.parametrize("damage", ["garbage", "truncated", "empty"])
def test_a_damaged_cache_file_is_rebuilt_with_a_log_line(
    default_engine: Engine,
    history: History,
    syncer: tuple[HistoryNgrams, list[str]],
    damage: str,
) -> None:
    sync, lines = syncer
    context, rest = _note(default_engine)
    _chat(history, NOTE, NOTE)
    sync.sync_now(history.path)
    assert default_engine.target is not None
    path = cache_path(history.path, default_engine.target.vocab_fingerprint)
    data = path.read_bytes()
    path.write_bytes({"garbage": b"\x00not a zip\xff" * 100, "truncated": data[: len(data) // 2], "empty": b""}[damage])
    default_engine.ngrams.clear()

    fresh = HistoryNgrams(default_engine, log=lines.append)  # a new process: nothing known but the file
    try:
        assert fresh.sync_now(history.path) is not None
    finally:
        fresh.close()
    assert any("it is damaged" in line and "rebuilding it from the history" in line for line in lines), lines
    assert _proposal(default_engine, context, len(rest)) == rest
    counts, _manifest = _on_disk(default_engine, history)  # sound again
    assert counts.chain(context, len(rest), HISTORY_RULE) == rest


def test_a_cache_file_of_another_vocabulary_is_rebuilt(
    default_engine: Engine,
    history: History,
    syncer: tuple[HistoryNgrams, list[str]],
) -> None:
    sync, lines = syncer
    context, rest = _note(default_engine)
    _chat(history, NOTE, NOTE)
    assert default_engine.target is not None
    path = cache_path(history.path, default_engine.target.vocab_fingerprint)
    foreign = NgramCounts(ngram_store.HISTORY_ORDERS)
    foreign.add(context + [7, 7, 7, 7] * 3)  # other ids for the same context
    ngram_store.save(path, foreign, {}, "another-vocabulary")

    sync.sync_now(history.path)
    assert any("another model's vocabulary" in line for line in lines), lines
    assert _proposal(default_engine, context, len(rest)) == rest
    assert _on_disk(default_engine, history)[0].chain(context, len(rest), HISTORY_RULE) == rest


def test_a_cache_with_tokens_the_model_lacks_is_rebuilt(
    default_engine: Engine,
    history: History,
    syncer: tuple[HistoryNgrams, list[str]],
) -> None:
    sync, lines = syncer
    assert default_engine.target is not None
    fingerprint, n_vocab = default_engine.target.vocab_fingerprint, default_engine.target.n_vocab
    path = cache_path(history.path, fingerprint)
    bad = NgramCounts(ngram_store.HISTORY_ORDERS)
    bad.add([1, 2, 3, n_vocab + 5] * 3)
    ngram_store.save(path, bad, {}, fingerprint)
    sync.sync_now(history.path)
    assert any("inconsistent tables" in line for line in lines), lines
    assert _proposal(default_engine, [1, 2, 3], 4) == []


def test_a_deletion_removes_the_other_vocabularies_caches(
    default_engine: Engine,
    history: History,
    syncer: tuple[HistoryNgrams, list[str]],
) -> None:
    sync, _lines = syncer
    _chat(history, NOTE, NOTE)
    other = history.path.parent / CACHE_FOLDER / "0123456789abcdef.npz"
    ngram_store.save(other, NgramCounts(ngram_store.HISTORY_ORDERS), {1: 1}, "0123456789abcdef")
    sync.sync_now(history.path)
    assert other.exists()  # kept for switching back to that model
    sync.sync_now(history.path, forget_session=True)
    assert not other.exists()  # it may hold the deleted text; rebuilt when its model loads


def test_the_background_sync_merges_requests(
    default_engine: Engine,
    history: History,
    syncer: tuple[HistoryNgrams, list[str]],
) -> None:
    sync, _lines = syncer
    context, rest = _note(default_engine)
    _chat(history, NOTE, NOTE)
    for _ in range(5):
        sync.request(history.path)
    assert sync.wait_idle(60)
    assert 1 <= sync.syncs <= 2
    assert _proposal(default_engine, context, len(rest)) == rest


def test_another_vocabulary_starts_the_tables_over_and_voids_a_sync_under_way(default_model: Path, models) -> None:
    from desktop_app.engine.drafters.history_vocab import TargetChanged

    engine = Engine()
    try:
        engine.load_target(default_model)
        vocab = engine.history_vocab()
        engine.ngrams.learn([5, 6, 7, 8, 5, 6, 7, 8])
        engine.load_target(default_model)  # the same vocabulary: this run's n-grams stay
        assert engine.ngrams.chain([5, 6], 2) == [7, 8]
        with pytest.raises(TargetChanged):
            vocab.tokenize("hello")  # a sync started with the old target stops
        with pytest.raises(TargetChanged):
            vocab.use_history(NgramCounts(ngram_store.HISTORY_ORDERS), forget_session=False)
        engine.load_target(models.draft_other_vocab)  # another vocabulary: its ids mean other text
        assert engine.target is not None and engine.target.vocab_fingerprint != vocab.fingerprint
        assert engine.ngrams.chain([5, 6], 2) == []
    finally:
        engine.close()
