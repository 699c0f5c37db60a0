"""llama-server's ``POST /infill`` (editor plugins such as llama.vscode call it): fill in the middle
between ``input_prefix`` (plus ``prompt``, the text typed at the cursor) and ``input_suffix``, with
the target's FIM tokens. Answered in llama-server's ``/completion`` shape: ``content``, ``stop``,
``tokens_predicted``, ``timings``; streamed as ``data:`` lines of the same objects. llama.cpp's
sampling fields as on every endpoint (request_fields.py), greedy unless ``temperature`` is given.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

from starlette.requests import Request

from desktop_app.engine.api import DEFAULT_SPEC_MODE, FinishReason, GenerateRequest, SpecMode
from desktop_app.engine.events import Finished
from desktop_app.engine.stats import GenerationStats
from desktop_app.server.backend import Failed, Job
from desktop_app.server.body_types import SHARED
from desktop_app.server.jobs import batched
from desktop_app.server.openai_schema import BadRequest, Field, timings
from desktop_app.server.request_fields import accepted, answer_length, sampling, spec_mode, stop_strings

ACCEPTED = accepted(
    {"input_prefix", "input_suffix", "input_extra", "prompt", "n_predict", "max_tokens", Field.STOP, "stream"}
    | {"speculation", "model"}
)


def parse_infill_request(body: object, default_spec: SpecMode = DEFAULT_SPEC_MODE) -> tuple[GenerateRequest, bool]:
    """(the engine request, stream?) or BadRequest naming the field."""
    if not isinstance(body, dict):
        raise BadRequest("the request body must be a JSON object")
    SHARED.check(body)  # the fields every endpoint shares, typed the same everywhere
    body = ACCEPTED.check(body)
    texts = {name: body.get(name, "") for name in ("input_prefix", "input_suffix", "prompt")}
    for name, value in texts.items():
        if not isinstance(value, str):
            raise BadRequest(f"'{name}' must be a string", name)
    if body.get("input_extra"):
        raise BadRequest(
            "'input_extra' (other files as context) is not supported yet: send it in input_prefix", "input_extra"
        )
    stop = stop_strings(body, Field.STOP)
    try:
        request = GenerateRequest(
            prompt=texts["input_prefix"] + texts["prompt"],
            suffix=texts["input_suffix"],
            max_tokens=answer_length(body, ("n_predict", "max_tokens")),
            sampling=sampling(body, temperature=0.0),  # greedy unless asked: an editor's completion
            spec=spec_mode(body, default_spec),
            stop=stop,
        )
    except ValueError as exc:
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
