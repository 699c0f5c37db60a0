"""llama-server's ``POST /infill`` (editor plugins such as llama.vscode call it): fill in the middle
between ``input_prefix`` (plus ``prompt``, the text typed at the cursor) and ``input_suffix``, with
the target's FIM tokens. Answered in llama-server's ``/completion`` shape: ``content``, ``stop``,
``tokens_predicted``, ``timings``; streamed as ``data:`` lines of the same objects.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

from starlette.requests import Request

from desktop_app.engine.api import (
    DEFAULT_SPEC_MODE,
    MAX_TOKENS,
    FinishReason,
    GenerateRequest,
    SamplingParams,
    SpecMode,
)
from desktop_app.engine.events import Finished
from desktop_app.engine.stats import GenerationStats
from desktop_app.server.backend import Failed, Job
from desktop_app.server.jobs import batched
from desktop_app.server.openai_schema import MAX_STOP_STRINGS, BadRequest, Field, timings

FIELDS = frozenset(
    {"input_prefix", "input_suffix", "input_extra", "prompt", "n_predict", "max_tokens", "temperature", "top_k"}
    | {"top_p", "min_p", Field.STOP, "seed", "stream", "speculation", "cache_prompt", "samplers", "t_max_prompt_ms"}
)
IGNORED = frozenset({"cache_prompt", "samplers", "t_max_prompt_ms"})  # llama-server's tuning knobs


def parse_infill_request(body: object, default_spec: SpecMode = DEFAULT_SPEC_MODE) -> tuple[GenerateRequest, bool]:
    """(the engine request, stream?) or BadRequest naming the field."""
    if not isinstance(body, dict):
        raise BadRequest("the request body must be a JSON object")
    body = {k: v for k, v in body.items() if v is not None and k not in IGNORED}
    unknown = sorted(set(body) - FIELDS)
    if unknown:
        raise BadRequest(
            f"unknown field '{unknown[0]}' (this endpoint accepts: {', '.join(sorted(FIELDS))})", unknown[0]
        )
    texts = {name: body.get(name, "") for name in ("input_prefix", "input_suffix", "prompt")}
    for name, value in texts.items():
        if not isinstance(value, str):
            raise BadRequest(f"'{name}' must be a string", name)
    if body.get("input_extra"):
        raise BadRequest(
            "'input_extra' (other files as context) is not supported yet: send it in input_prefix", "input_extra"
        )
    stop = body.get(Field.STOP, [])
    if not isinstance(stop, list) or len(stop) > MAX_STOP_STRINGS or not all(isinstance(s, str) and s for s in stop):
        raise BadRequest(f"'{Field.STOP}' must be a list of up to {MAX_STOP_STRINGS} non-empty strings", Field.STOP)
    limit = body.get("n_predict", body.get("max_tokens", -1))
    for name in ("n_predict", "max_tokens", "top_k", "seed"):
        if name in body and (isinstance(body[name], bool) or not isinstance(body[name], int)):
            raise BadRequest(f"'{name}' must be an integer", name)
    try:
        sampling = SamplingParams(
            temperature=body.get("temperature", 0.0),
            top_k=body.get("top_k", 0),
            top_p=body.get("top_p", 1.0),
            min_p=body.get("min_p", 0.0),
            seed=body.get("seed"),
        )
        request = GenerateRequest(
            prompt=texts["input_prefix"] + texts["prompt"],
            suffix=texts["input_suffix"],
            max_tokens=MAX_TOKENS.high if limit < 0 else limit,  # llama-server's -1: no limit
            sampling=sampling,
            spec=SpecMode(body.get("speculation", default_spec.value)),
            stop=stop,
        )
    except (ValueError, TypeError) as exc:
        raise BadRequest(str(exc)) from None
    return request, bool(body.get("stream", False))


def infill_result(text: str, stats: GenerationStats) -> dict[str, Any]:
    if stats.stop_string:
        stop_type = "word"
    elif stats.finish_reason in (FinishReason.LENGTH, FinishReason.CONTEXT_FULL):
        stop_type = "limit"
    else:
        stop_type = "eos"
    return dict(  # llama-server's own keys (its stop flag is not a finish reason)
        content=text,
        stop=True,
        stop_type=stop_type,
        stopping_word=stats.stop_string,
        tokens_predicted=stats.generated_tokens,
        tokens_evaluated=stats.prompt_tokens,
        timings=timings(stats),
    )


async def infill_events(job: Job, request: Request, first: Any) -> AsyncIterator[str]:
    async for item in batched(job, request, first):
        if isinstance(item, Failed):
            payload: dict[str, Any] = {"error": {"message": str(item), "type": "server_error"}}
        elif isinstance(item, Finished):
            payload = infill_result("", item.stats)
        else:
            payload = dict(content=item, stop=False)
        yield f"data: {json.dumps(payload)}\n\n"
