"""The copies bench's own logic (``python -m lab copies``, lab/copies.py): its held-out prompt set,
the figures and same-round ratios it reports, and what it reads from both servers' timings."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from lab.copies import Reply

ROOT = Path(__file__).resolve().parents[1]


def test_the_held_out_set_has_varied_code_edits_rewrites_and_extractions_in_two_disjoint_groups() -> None:
    from lab.copy_prompts import load_copy_prompts

    groups = load_copy_prompts()
    again, new = groups["again"], groups["new"]
    code = [p for p in again if p.kind == "code edit"]
    assert len(code) >= 8 and len({p.language for p in code}) >= 5
    assert sum(p.kind == "rewrite" for p in again) >= 3 and sum(p.kind == "extraction" for p in again) >= 3
    assert len(new) >= 6 and all(p.kind == "code edit" for p in new)
    assert not {p.name for p in again} & {p.name for p in new}
    assert not {p.text for p in again} & {p.text for p in new}
    for p in code + new:  # the model is asked to copy: the code is there and the answer is it, whole
        assert "```" in p.text and "whole" in p.text, p.name
        assert 8 <= p.text.split("```")[1].count("\n") <= 45, p.name


def test_the_held_out_prompts_are_not_the_ones_auto_was_tuned_on() -> None:
    from lab.copy_prompts import load_copy_prompts

    tuned = (ROOT / "resources/bench/prompts.json").read_text() + (ROOT / "lab/peer_api.py").read_text()
    tuned += "".join(p.read_text() for p in (ROOT / "lab/field").glob("*.py"))
    tuned_texts = json.dumps(json.loads((ROOT / "resources/bench/prompts.json").read_text()))
    for ps in load_copy_prompts().values():
        for p in ps:
            body = p.text.split("\n\n", 1)[-1][:60]  # the material copied, past the instruction
            assert body not in tuned and body not in tuned_texts, p.name


def test_only_picks_prompts_by_name_and_names_the_known_ones_on_a_typo() -> None:
    from lab.copy_prompts import load_copy_prompts, only

    groups = load_copy_prompts()
    first_again, first_new = groups["again"][0].name, groups["new"][0].name
    picked = only(groups, [first_new, first_again])
    assert [p.name for p in picked["again"]] == [first_again] and [p.name for p in picked["new"]] == [first_new]
    assert only(groups, None) == groups
    with pytest.raises(ValueError, match=f"no copy prompt nope; known: .*{first_again}"):
        only(groups, ["nope"])


def test_a_prompt_file_with_a_name_twice_or_an_unknown_kind_is_refused(tmp_path: Path) -> None:
    from lab.copy_prompts import load_copy_prompts

    entry = '[[{g}]]\nname = "{n}"\nkind = "{k}"\nlanguage = "c"\ntext = "x"\n'
    twice = tmp_path / "twice.toml"
    twice.write_text(entry.format(g="again", n="a", k="rewrite") + entry.format(g="new", n="a", k="code edit"))
    with pytest.raises(ValueError, match="used twice: a"):
        load_copy_prompts(twice)
    odd = tmp_path / "odd.toml"
    odd.write_text(entry.format(g="again", n="a", k="poem") + entry.format(g="new", n="b", k="code edit"))
    with pytest.raises(ValueError, match="unknown kinds poem"):
        load_copy_prompts(odd)


def _reply(tokens: int, seconds: float, text: str = "same", decode_ms: float = 0.0) -> Reply:
    from lab.copies import Reply

    return Reply(tokens, seconds, decode_ms or seconds * 500, 0, 0, None, text)


def test_a_repeated_prompt_s_figure_leaves_out_the_first_request_and_takes_the_median() -> None:
    from lab.copies import again_figure, new_figure

    replies = [_reply(100, 10.0), _reply(100, 1.0), _reply(100, 0.5), _reply(100, 2.0)]  # a slow first read
    assert again_figure(replies, lambda r: r.tokens_per_s) == pytest.approx(100.0)  # of 100, 200, 50
    assert again_figure(replies, lambda r: r.decode_per_s) == pytest.approx(200.0)  # decode_ms is half of each
    assert new_figure([_reply(100, 1.0), _reply(300, 3.0), _reply(0, 4.0)]) == pytest.approx(50.0)  # 400 / 8 s
    assert new_figure([_reply(100, 1.0), _reply(300, 3.0)], decode=True) == pytest.approx(200.0)


def test_ratios_are_medians_of_same_round_ratios_against_the_better_spec_type() -> None:
    """Round 2 is twice as slow for everyone: same-round ratios ignore it; ngram-simple has the
    higher median, so it is the best spec type, and ngram-mod keeps its own ratio."""
    from lab.copies import ratios

    figures = {
        "ours off": [100.0, 50.0, 100.0],
        "ours auto": [300.0, 150.0, 240.0],
        "peer plain": [100.0, 50.0, 100.0],
        "peer ngram-simple": [200.0, 100.0, 240.0],
        "peer ngram-mod": [150.0, 60.0, 160.0],
    }
    out = ratios(figures)
    assert out["best_spec_type"] == "peer ngram-simple"
    assert out["auto_vs_best_spec_type"] == pytest.approx(1.5)  # of 1.5, 1.5, 1.0
    assert out["auto_vs_ngram_mod"] == pytest.approx(2.0)  # of 2.0, 2.5, 1.5
    assert out["auto_vs_off"] == pytest.approx(3.0) and out["off_vs_peer_plain"] == pytest.approx(1.0)
    assert out["tokens_per_s"]["ours auto"] == 240.0


def test_the_report_gives_per_prompt_ratios_counts_prompts_behind_ngram_mod_and_texts_unlike_off() -> None:
    from lab.copies import AGAIN, CONFIGS, report
    from lab.copy_prompts import CopyPrompt

    fast = CopyPrompt("fast", "code edit", "go", "x")
    slow = CopyPrompt("slow", "rewrite", "english", "y")
    edit = CopyPrompt("edit", "code edit", "c", "z")
    speed = {"ours auto": 300.0, "peer ngram-mod": 200.0}  # tokens/s on `fast`; everything else at 100

    def round_(slow_down: float) -> dict[str, dict[str, list[Reply]]]:
        out: dict[str, dict[str, list[Reply]]] = {}
        for n in CONFIGS:
            tps = speed.get(n, 100.0)
            text = "other" if n == "ours auto" else "same"  # Auto's `slow` text differs in its last request
            out[n] = {
                "fast": [_reply(100, 10.0)] + [_reply(100, 100 / tps * slow_down) for _ in range(AGAIN - 1)],
                "slow": [_reply(100, 1.0) for _ in range(AGAIN - 1)] + [_reply(100, 1.0, text)],
                "edit": [_reply(200, 2.0 * slow_down if n != "ours auto" else 1.0 * slow_down)],
            }
        return out

    result = report([round_(1.0), round_(2.0)], {"again": [fast, slow], "new": [edit]})
    again = result["again"]
    assert again["prompts"]["fast"]["client"]["auto_vs_ngram_mod"] == pytest.approx(1.5)
    assert again["prompts"]["slow"]["client"]["auto_vs_ngram_mod"] == pytest.approx(1.0)
    assert again["prompts_auto_at_least_ngram_mod"] == "2/2" and again["auto_vs_ngram_mod_lowest"] == 1.0
    assert again["auto_text_same_as_off"] == f"{2 * (2 * AGAIN - 1)}/{2 * 2 * AGAIN}"  # one differs a round
    assert again["prompts"]["fast"]["servers"]["ours auto"]["tokens"] == 100
    assert result["new"]["client"]["auto_vs_best_spec_type"] == pytest.approx(2.0)
    assert result["new"]["auto_text_same_as_off"] == "2/2"


def test_a_reply_reads_both_servers_timings() -> None:
    """Ours send target passes under ``speculation``; llama-server leaves draft counts out when
    it drafted nothing."""
    from lab.copies import Reply
    from lab.peer_api import Answer

    ours = {"predicted_ms": 500.0, "draft_n": 80, "draft_n_accepted": 70, "speculation": {"target_passes": 40}}
    reply = Reply.of(Answer("text", 100, 0.8, ours))
    assert (reply.drafted, reply.accepted, reply.target_passes) == (80, 70, 40)
    assert reply.tokens_per_s == pytest.approx(125.0) and reply.decode_per_s == pytest.approx(200.0)
    plain = Reply.of(Answer("text", 100, 1.0, {"predicted_ms": 900.0}))
    assert (plain.drafted, plain.accepted, plain.target_passes) == (0, 0, None)
    assert Reply.of(Answer("", 0, 0.1)).decode_per_s == 0.0  # no timings: no decode speed, no crash


def test_the_copies_command_takes_rounds_only_and_a_longer_answer_by_default() -> None:
    from lab.cli import build_parser
    from lab.copies import DEFAULT_MAX_TOKENS, DEFAULT_ROUNDS

    parser = build_parser()
    args = parser.parse_args(["copies", "/peer/bin"])
    assert (args.peer, args.repeats, args.max_tokens, args.only) == (
        Path("/peer/bin"),
        DEFAULT_ROUNDS,
        DEFAULT_MAX_TOKENS,
        None,
    )
    args = parser.parse_args(["copies", "bin", "--rounds", "2", "--max-tokens", "48", "--only", "a", "b"])
    assert (args.repeats, args.max_tokens, args.only) == (2, 48, ["a", "b"])
