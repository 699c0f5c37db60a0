"""Calibration prices each batch size as the speculative loop meets it. llama.cpp reuses its
compute graph while the batch shape repeats, so plain decoding (one token after another) is
cheaper per pass than a one-token pass right after a verify pass. A model whose passes cost
that way (a stand-in with a clock it advances: real timings cannot be asserted) must come out
of calibration with plain decoding at its steady cost and each verify pass charged the rebuild
it causes in the pass after it; timed round-robin alone, a draft looked cheaper than it was."""

from __future__ import annotations

from collections.abc import Sequence

from desktop_app.engine.llama.timing import time_decodes

ONE = 0.010  # one token, the graph reused
ROW = 0.004  # each further row of a batch
REBUILD = 0.0015  # a pass whose shape differs from the previous pass's


class ShapedModel:
    """Decodes cost ONE + ROW per extra row, plus REBUILD when the shape changed."""

    is_recurrent = False
    n_ctx = 4096

    def __init__(self) -> None:
        self.kv_tokens: list[int] = []
        self.now = 0.0
        self.last_shape = 0

    def clock(self) -> float:
        return self.now

    def prefill(self, tokens: Sequence[int], need_logits: bool = True) -> int:
        self.kv_tokens = list(tokens)
        self.last_shape = 0
        return len(tokens)

    def decode_all_rows(self, tokens: Sequence[int]) -> None:
        b = len(tokens)
        self.now += ONE + ROW * (b - 1) + (REBUILD if b != self.last_shape else 0.0)
        self.last_shape = b
        self.kv_tokens.extend(tokens)

    def truncate(self, n: int) -> None:
        del self.kv_tokens[n:]


def test_a_verify_pass_is_charged_the_graph_rebuilds_it_causes() -> None:
    model = ShapedModel()
    model.kv_tokens = [3] * 5  # a conversation's cached prefix
    costs = time_decodes(model, [1, 2, 5, 9], token=7, depth=16, reps=3, clock=model.clock)  # type: ignore[arg-type]
    assert abs(costs[0] - ONE) < 1e-12  # plain decoding: one token after another
    for b, cost in zip([2, 5, 9], costs[1:]):
        # its own pass rebuilt the graph, and so did the one-token pass after it
        assert abs(cost - (ONE + ROW * (b - 1) + 2 * REBUILD)) < 1e-12
    assert model.kv_tokens == [3] * 5  # the cache is trimmed back to where it was


def test_auto_calibrates_in_a_small_context_a_long_prompt_filled(models) -> None:
    """Calibration times decodes after whatever the cache holds: with a 256-token context nearly
    filled by the prompt, it once ran past the context and the answer failed ("context full")."""
    from desktop_app.engine import Engine
    from desktop_app.engine.api import GenerateRequest, ModelOptions, SpecMode
    from desktop_app.engine.errors import ContextOverflowError
    from desktop_app.engine.events import final_result

    engine = Engine()
    try:
        engine.load_target(models.target, ModelOptions(n_ctx=256))

        def request(words: int, spec: SpecMode) -> GenerateRequest:
            return GenerateRequest(messages=[{"role": "user", "content": "word " * words}], max_tokens=1, spec=spec)

        def prompt_tokens(words: int) -> int:
            try:
                return len(engine.build_prompt(request(words, SpecMode.OFF))[0])
            except ContextOverflowError:
                return 1 << 30

        # the longest message that still fits, leaving less room than a verify pass of 9 rows
        words = max(n for n in range(150, 256) if prompt_tokens(n) < 255)
        assert prompt_tokens(words) > 256 - 9
        for spec in (SpecMode.OFF, SpecMode.AUTO):
            done = final_result(engine.generate(request(words, spec)))
            assert done.stats.generated_tokens == 1
    finally:
        engine.close()
