"""The field bench's own logic (lab/field): pairing, the interleaved sequence, documents, loads,
and how llama-server is started beside us."""

from __future__ import annotations

from pathlib import Path

import pytest


def test_the_field_bench_pairs_sides_in_alternating_order_and_takes_the_median_of_same_round_ratios() -> None:
    """Each round runs both sides, the first alternating; the figure is the median of the ratios
    within rounds, so a machine twice as slow in one round moves neither side's ratio."""
    from lab.field.paired import Paired, alternating, median_ratio

    assert [alternating(("off", "auto"), t) for t in range(3)] == [["off", "auto"], ["auto", "off"], ["off", "auto"]]
    assert alternating(("a", "b", "c"), 4) == ["b", "c", "a"]
    paired = Paired(("off", "auto"))
    for off, auto in ((10.0, 11.0), (20.0, 22.0), (5.0, 7.5)):  # ratios 1.1, 1.1, 1.5; round 2 twice as slow
        paired.add("off", off)
        paired.add("auto", auto)
    assert paired.ratio() == pytest.approx(1.1)  # auto over off; a ratio of medians would say 1.1 too, by luck
    assert paired.median("off") == 10.0
    assert median_ratio([2.0, 9.0], [1.0, 3.0]) == pytest.approx(2.5)  # the median of 2 and 3
    with pytest.raises(ValueError, match="one figure of each side per round"):
        median_ratio([1.0], [1.0, 2.0])


def test_the_interleaved_sequence_switches_conversations_and_knows_its_follow_ups() -> None:
    from lab.field.api_runs import QUESTIONS, REQUESTS
    from lab.field.paired import follow_ups, interleaving

    order = interleaving(("A", "B"), REQUESTS)
    assert order == ["A", "B", "A", "B", "A"]
    assert follow_ups(order) == [False, False, True, True, True]  # two cold reads, three follow-ups
    assert max(order.count(c) for c in "AB") <= len(QUESTIONS)  # a question for every turn of a conversation


def test_field_documents_are_deterministic_varied_and_as_long_as_asked() -> None:
    from lab.field.documents import document, sentences

    words = lambda text: len(text.split())  # noqa: E731 (a tokenizer's stand-in)
    doc = document(3, 2500, words)
    assert doc == document(3, 2500, words) and doc != document(4, 2500, words)
    assert 2500 <= words(doc) < 2500 + 40  # whole sentences, stopping at the first past the target
    assert len(document(3, 6000, words).split()) >= 6000
    assert document(3, 6000, words).startswith(doc)  # a longer document of a seed extends the shorter one
    body = [s.strip() for s in doc.split(".") if s.strip()]
    assert len(set(body)) > 0.8 * len(body)  # not a repeated sentence
    assert "\n\n" in doc and any(ch.isdigit() for ch in doc)  # paragraphs and numbers, as real text has
    first = next(sentences(3))
    assert not first.startswith((" ", "\n"))


def test_field_loads_and_sizes_are_checked_and_long_prompts_beyond_the_model_are_reported_not_run() -> None:
    from lab.field import chosen
    from lab.field.loads import parse_loads
    from lab.field.prompt_read import runnable, server_ctx

    assert parse_loads("idle, busy,llama") == ["idle", "busy", "llama"]
    with pytest.raises(ValueError, match="comma-separated list of idle, busy, llama"):
        parse_loads("busy,gpu")
    sizes, skipped = runnable([2500, 6000, 26000], 8192)
    assert sizes == [2500, 6000] and list(skipped) == [26000] and "trained at 8,192 tokens" in skipped[26000]
    assert runnable([2500, 26000], 32768) == ([2500, 26000], {})
    assert server_ctx([2500, 6000]) == 8192 and server_ctx([26000]) == 26624 and server_ctx([]) == 8192
    assert chosen(["all"])[-1] == "window-vs-cli" and chosen(["prompt-read", "busy"]) == ["busy", "prompt-read"]


def test_llama_server_alone_gets_the_peer_libraries_and_no_repacking_on_amx(monkeypatch, tmp_path: Path) -> None:
    import lab.peer_api as peer_api

    monkeypatch.setenv("LD_LIBRARY_PATH", "/elsewhere")
    monkeypatch.setattr(peer_api, "peer_cpu_flags", lambda: ["--no-repack"])
    env = peer_api.peer_env(tmp_path)
    assert env["LD_LIBRARY_PATH"] == f"{tmp_path}:/elsewhere" and env["LLAMA_ARG_REPACK"] == "0"
    monkeypatch.setattr(peer_api, "peer_cpu_flags", lambda: [])
    assert "LLAMA_ARG_REPACK" not in peer_api.peer_env(tmp_path)


def test_the_document_bench_asks_quotes_and_other_questions_of_several_documents_inlined_as_the_app_does() -> None:
    """Issue 50's document bench: at least 4 tasks of each kind over at least 3 documents, each
    document in the user's message as the window and the API put it (one block naming the file)."""
    from lab.field.document_tasks import CATEGORIES, SOURCES, TASKS, document_message, first_entries

    names = {s.name for s in SOURCES}
    for category in CATEGORIES:
        chosen = [t for t in TASKS if t.category == category]
        assert len(chosen) >= 4 and len({t.source for t in chosen}) >= 3, category
    assert {t.source for t in TASKS} <= names and len({t.name for t in TASKS}) == len(TASKS)
    message = document_message("BSD", "Copyright (c) The Regents.", "Quote it.")
    assert message == '<document name="BSD">\nCopyright (c) The Regents.\n</document>\n\nQuote it.'
    entry = "pkg ({v}) unstable; urgency=medium\n\n  * Change {v}. Closes: #{v}.\n\n -- A <a@b>  Mon, 0{v} Jan 2023\n"
    changelog = "\n".join(entry.format(v=v) for v in (3, 2, 1))
    kept = first_entries(changelog, 2)
    assert kept.startswith("pkg (3)") and kept.endswith("Mon, 02 Jan 2023") and "(1)" not in kept
    with pytest.raises(ValueError, match="3 entries, fewer than 4"):
        first_entries(changelog, 4)


def test_the_document_bench_tells_a_quote_from_a_loop() -> None:
    """What an answer is: a stretch copied from the document, or the answer repeating itself."""
    from lab.field.document_tasks import copied_share, repeated_share

    document = "Redistributions of source code must retain the above copyright notice, this list of conditions."
    quote = "It says: Redistributions of source code must retain the above copyright notice."
    assert copied_share(quote, document) == pytest.approx((len(quote) - 10) / len(quote))  # not 'It says: ', '.'
    assert repeated_share(quote) == 0.0
    loop = "The work is the original work. " * 4
    assert copied_share(loop, document) == 0.0 and repeated_share(loop) == pytest.approx(0.75)
    assert copied_share("", document) == repeated_share("") == 0.0


def test_the_document_bench_compares_within_rounds_and_judges_each_kind_against_its_target() -> None:
    """A round where the machine ran at half speed moves no ratio; quotes are judged against 1.3x
    and the rest against 0.97x; an Auto answer that differs from off's is counted."""
    from lab.field.document_tasks import QUOTE, TASKS
    from lab.field.documents_bench import CONFIGS, summarize

    runs = []
    for slow in (1.0, 2.0, 1.0):
        answers = {}
        for task in TASKS:
            gain = 1.5 if task.category == QUOTE else 0.95  # Auto's speed over off's in every round
            ms = {n: 1000.0 * slow for n in CONFIGS} | {"ours auto": 1000.0 * slow / gain}
            answers[task.name] = {
                n: {"text": "a", "tokens": 100, "decode_ms": ms[n], "drafted": 9, "accepted": 6}
                | {"prompt_new": 1, "drafter": "ngram", "target_passes": 50}
                for n in CONFIGS
            }
        runs.append({"answers": answers})
    runs[1]["answers"][TASKS[0].name]["ours auto"]["text"] = "b"
    report = summarize(runs, {t.source: "a document" for t in TASKS})
    quote, rest = report["categories"]["quote"], report["categories"]["rest"]
    assert quote["auto_vs_off_median_of_tasks"] == pytest.approx(1.5) and quote["target_met"]
    assert rest["auto_vs_off_median_of_tasks"] == pytest.approx(0.95) and not rest["target_met"]
    first = report["tasks"][0]
    assert first["auto_text_same_as_off"] == "2/3" and first["auto_acceptance"] == pytest.approx(6 / 9, abs=1e-3)
    assert first["auto_tokens_per_pass"] == 2.0
