"""``specchat --self-test``: prove an install works, offline, in a few seconds.

Loads the embedded default model, generates with speculation off and on (prompt lookup) at
temperature 0, checks both outputs are identical, prints the backend and the speeds.
Exit 0 on success, 1 with the reason otherwise.
"""

from __future__ import annotations

import sys

PROMPT = "Repeat exactly: The quick brown fox jumps over the lazy dog."


def run_self_test() -> int:
    from desktop_app import __version__
    from desktop_app.engine import Engine, EngineError, default_model_path, require_rpc
    from desktop_app.engine.api import DrafterKind, GenerateRequest, SpecMode
    from desktop_app.engine.events import Finished, final_result

    try:
        engine = Engine()
        info = engine.load_target(default_model_path())
        print(f"specchat {__version__}  backend: {engine.backend().summary()}")
        require_rpc()  # EngineError (below) when llama.cpp was built without its RPC backend
        print("workers: llama.cpp's RPC backend is built in (specchat worker, --workers)")
        print(f"model: {info.name} ({info.quantization}, {info.size_bytes / 1e6:.0f} MB)")
        results: dict[str, Finished] = {}
        for spec in (SpecMode.OFF, SpecMode.ON):
            request = GenerateRequest(
                messages=[{"role": "user", "content": PROMPT}],
                max_tokens=32,
                spec=spec,
                draft_max=4,
                drafter=DrafterKind.NGRAM,
            )
            results[spec] = final_result(engine.generate(request))
            s = results[spec].stats
            print(
                f"speculation {spec.value:3}: {s.generated_tokens} tokens, {s.decode_tokens_per_s:.1f} tok/s, "
                f"acceptance {s.acceptance_rate:.0%}"
            )
        off, on = results[SpecMode.OFF], results[SpecMode.ON]
        if not off.token_ids:
            print("self-test FAILED: the model generated nothing", file=sys.stderr)
            return 1
        if off.token_ids != on.token_ids:
            print("self-test FAILED: speculative output differs from plain decoding", file=sys.stderr)
            return 1
        print("self-test passed: outputs identical with and without speculation")
        return 0
    except (EngineError, OSError, ValueError) as exc:
        print(f"self-test FAILED: {exc}", file=sys.stderr)
        return 1
