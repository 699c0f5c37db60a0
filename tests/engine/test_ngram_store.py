"""The on-disk n-gram cache as a function of the history (llama-free: a toy tokenizer)."""

from __future__ import annotations

from pathlib import Path

import pytest

from desktop_app.engine import ngram_store
from desktop_app.engine.drafters.ngram_cache import HISTORY_RULE
from desktop_app.engine.ngram_store import CacheFileError, SourceMessage, load, sync


class Tokenizer:
    """Words to ids; counts the messages it tokenized."""

    def __init__(self) -> None:
        self.ids: dict[str, int] = {}
        self.calls = 0

    def __call__(self, text: str) -> list[int]:
        self.calls += 1
        return [self.ids.setdefault(word, len(self.ids)) for word in text.split()]


def _quiet(line: str) -> None:
    pass


def test_messages_left_out_by_the_budget_stay_out(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ngram_store, "MAX_TOKENS", 10)
    path, tokenize = tmp_path / "c.npz", Tokenizer()
    messages = [SourceMessage(i, f"m{i} a b c") for i in range(1, 6)]  # 4 tokens each
    state = sync(path, "v", messages, tokenize, _quiet)
    assert set(state.manifest) == {4, 5}  # the newest within 10 tokens
    tokenize.calls = 0
    state = sync(path, "v", [*messages, SourceMessage(6, "m6 a b c")], tokenize, _quiet)
    assert tokenize.calls == 1 and set(state.manifest) == {4, 5, 6}  # only the new message


def test_deleting_every_message_it_learned_empties_the_file(tmp_path: Path) -> None:
    path, tokenize = tmp_path / "c.npz", Tokenizer()
    sync(path, "v", [SourceMessage(1, "x y z x y z")], tokenize, _quiet)
    assert len(load(path, "v")[0]) > 0
    state = sync(path, "v", [], tokenize, _quiet)
    counts, manifest = load(path, "v")
    assert len(state.counts) == 0 and len(counts) == 0 and manifest == {}


def test_an_edited_message_is_relearned(tmp_path: Path) -> None:
    path, tokenize = tmp_path / "c.npz", Tokenizer()
    lines: list[str] = []
    sync(path, "v", [SourceMessage(1, "red green blue red green blue")], tokenize, lines.append)
    state = sync(path, "v", [SourceMessage(1, "red green gold red green gold")], tokenize, lines.append)
    red, green, gold = tokenize.ids["red"], tokenize.ids["green"], tokenize.ids["gold"]
    assert state.counts.chain([red, green], 1, HISTORY_RULE) == [gold]
    assert any("deleted or edited" in line for line in lines)


def test_the_known_state_is_used_while_the_file_is_the_one_saved(tmp_path: Path) -> None:
    path, tokenize = tmp_path / "c.npz", Tokenizer()
    messages = [SourceMessage(1, "a b c a b c")]
    state = sync(path, "v", messages, tokenize, _quiet)
    assert sync(path, "v", messages, tokenize, _quiet, known=state) is state
    path.write_bytes(b"junk")  # changed behind its back: read (and rebuilt) again
    lines: list[str] = []
    again = sync(path, "v", messages, tokenize, lines.append, known=state)
    assert again is not state and any("damaged" in line for line in lines)
    load(path, "v")


@pytest.mark.parametrize("meta", [
    '{"version": 1, "vocab": "v", "orders": [], "tokens_added": 0}',
    '{"version": 1, "vocab": "v", "orders": ["x"], "tokens_added": 0}',
    '{"version": 1, "vocab": "v", "orders": [4, 3, 2], "tokens_added": "lots"}',
    '[1, 2]',
])
def test_odd_metadata_is_a_damaged_file_not_a_crash(tmp_path: Path, meta: str) -> None:
    import numpy as np

    path = tmp_path / "c.npz"
    sync(path, "v", [SourceMessage(1, "a b c a b c")], Tokenizer(), _quiet)
    with np.load(path) as data:
        arrays = {name: data[name] for name in data.files}
    arrays["meta"] = np.frombuffer(meta.encode(), dtype=np.uint8)
    np.savez(path, **arrays)
    with pytest.raises(CacheFileError):
        load(path, "v")
    lines: list[str] = []
    sync(path, "v", [SourceMessage(1, "a b c a b c")], Tokenizer(), lines.append)
    assert any("rebuilding it from the history" in line for line in lines)
    load(path, "v")


def test_a_cache_that_cannot_be_saved_is_still_used(tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("")
    lines: list[str] = []
    state = sync(blocker / "c.npz", "v", [SourceMessage(1, "a b c a b c")], Tokenizer(), lines.append)
    assert len(state.counts) > 0 and any("cannot be saved" in line for line in lines)
