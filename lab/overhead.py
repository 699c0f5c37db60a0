"""``python -m lab overhead``: does the engine's own loop cost anything?

1. Speculation off vs llama-cpp-python's ``Llama.create_completion`` on the same model, prompt
   and settings (greedy, same threads/batch/context), runs interleaved.
2. Fixed-k speculation vs what the measured costs predict:
   E(a, k) = (1 - a^(k+1)) / (1 - a) tokens per cycle over (k * draft cost + verify cost of k+1),
   with ``a`` the per-token acceptance measured in the same run and the costs measured just before
   (calibration) or during the run itself (draft_s + verify_s per cycle).
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from typing import Any

from desktop_app.engine import Engine
from desktop_app.engine.api import DrafterKind, GenerateRequest, SpecMode, choose_drafter
from desktop_app.engine.auto.policy import expected_tokens
from desktop_app.engine.events import Finished, final_result

OVERHEAD_PROMPT = "Once upon a time, in a small village by the sea, there lived"
REPEATS = 5


def _run(engine: Engine, request: GenerateRequest) -> Finished:
    return final_result(engine.generate(request))


def vs_llama_cpp_python(engine: Engine, max_tokens: int, threads: int) -> dict[str, Any]:
    """Median tokens/s of our plain loop and of Llama.create_completion, interleaved."""
    import dataclasses

    import llama_cpp

    from desktop_app.engine.llama.model import default_flash_attn

    assert engine.target is not None
    options = engine.target.options
    flash = options.flash_attn if options.flash_attn is not None else default_flash_attn(options)
    if flash is None:  # llama.cpp's "auto" (a GPU), which Llama cannot ask for: compare both with it off
        flash = False
        engine.load_target(engine.target.path, dataclasses.replace(engine.target.options, flash_attn=False))
    assert engine.target is not None
    llm = llama_cpp.Llama(
        model_path=str(engine.target.path),
        n_ctx=engine.target.n_ctx,
        n_batch=engine.target.n_batch,
        n_threads=threads,
        n_threads_batch=threads,
        n_gpu_layers=engine.target.options.n_gpu_layers,
        flash_attn=flash,
        verbose=False,
    )
    ours, theirs, counts = [], [], []
    request = GenerateRequest(prompt=OVERHEAD_PROMPT, max_tokens=max_tokens, spec=SpecMode.OFF)
    for i in range(REPEATS + 1):
        t = time.perf_counter()
        mine = _run(engine, request)
        t_ours = time.perf_counter() - t
        t = time.perf_counter()
        out = llm.create_completion(OVERHEAD_PROMPT, max_tokens=max_tokens, temperature=0.0, repeat_penalty=1.0)
        t_theirs = time.perf_counter() - t
        assert isinstance(out, dict)  # not streamed
        if i == 0:
            continue  # warm-up (first prefill, page cache)
        ours.append(len(mine.token_ids) / t_ours)
        theirs.append(out["usage"]["completion_tokens"] / t_theirs)
        counts.append((len(mine.token_ids), out["usage"]["completion_tokens"], mine.text == out["choices"][0]["text"]))
    del llm
    ratio = statistics.median(ours) / statistics.median(theirs)
    return {
        "ours_tokens_per_s": round(statistics.median(ours), 2),
        "llama_cpp_python_tokens_per_s": round(statistics.median(theirs), 2),
        "ratio": round(ratio, 3),
        "same_text": all(c[2] for c in counts),
        "tokens": counts[0][:2],
        "flash_attn": flash,
        "threads": threads,
    }


def vs_prediction(engine: Engine, prompts: list[str], k: int, drafter: DrafterKind, max_tokens: int) -> dict[str, Any]:
    """Measured fixed-k tokens/s against the formula fed with costs measured just before."""
    d = engine.drafting.drafter_for(drafter)
    engine.auto.costs.clear()
    costs = engine.calibrate(d, k, reps=7)
    measured_tps, predicted_tps, per_cycle_tps, in_run_tps = [], [], [], []
    trials = successes = 0
    for prompt in prompts:
        request = GenerateRequest(
            messages=[{"role": "user", "content": prompt}],
            max_tokens=max_tokens,
            spec=SpecMode.ON,
            draft_max=k,
            drafter=drafter,
        )
        _run(engine, request)  # warm the prompt cache; measure the second run
        s = _run(engine, request).stats
        run_trials = sum(acc + (1 if acc < n else 0) for n, acc in s.cycles if n)
        run_hits = sum(acc for n, acc in s.cycles if n)
        trials += run_trials
        successes += run_hits
        a = run_hits / run_trials if run_trials else 0.0
        draft_cost = 0.0 if d is None or d.free else s.draft_s / max(s.drafted, 1)
        measured_tps.append(s.decode_tokens_per_s)
        predicted_tps.append(expected_tokens(a, k) / (k * draft_cost + costs.target_batch_s[k]))
        # the same costs, cycle by cycle with the drafts actually made (prompt lookup varies)
        t_pred = sum(n * draft_cost + costs.target_batch_s[n] for n, _ in s.cycles)
        per_cycle_tps.append(s.generated_tokens / t_pred)
        # the formula over the draft + verify costs measured in this very run (per cycle): what
        # is left between prediction and measurement is the loop's own time and the acceptance
        # model (the formula assumes each draft token is accepted independently)
        in_run_cycle_s = (s.draft_s + s.verify_s) / max(s.target_passes, 1)
        in_run_tps.append(expected_tokens(a, k) / in_run_cycle_s)
    ratio = statistics.median(m / p for m, p in zip(measured_tps, predicted_tps))
    ratio_cycles = statistics.median(m / p for m, p in zip(measured_tps, per_cycle_tps))
    ratio_in_run = statistics.median(m / p for m, p in zip(measured_tps, in_run_tps))
    return {
        "drafter": drafter.value,
        "k": k,
        "target_batch_ms": [round(x * 1000, 2) for x in costs.target_batch_s],
        "draft_token_ms": round(costs.draft_token_s * 1000, 3),
        "acceptance": round(successes / trials, 3) if trials else 0.0,
        "measured_tokens_per_s": round(statistics.median(measured_tps), 2),
        "formula_tokens_per_s": round(statistics.median(predicted_tps), 2),
        "measured_vs_formula": round(ratio, 3),
        "measured_vs_cycle_costs": round(ratio_cycles, 3),
        "measured_vs_formula_in_run_costs": round(ratio_in_run, 3),
    }


def cmd_overhead(engine: Engine, prompts: dict[str, list[str]], args: argparse.Namespace) -> dict[str, Any]:
    threads = args.threads or os.cpu_count() or 1
    drafter = choose_drafter(args.drafter, engine.drafters_available())
    cats = args.categories or (["rewrite"] if drafter is DrafterKind.NGRAM else list(prompts))
    texts = [t for c in cats for t in prompts[c]]
    return {
        "spec_off_vs_create_completion": vs_llama_cpp_python(engine, args.max_tokens, threads),
        "fixed_k_vs_prediction": vs_prediction(engine, texts, 4, drafter, args.max_tokens),
    }
