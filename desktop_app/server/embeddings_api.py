"""``POST /v1/embeddings``: OpenAI's request in, the engine's unit vectors out.

``input`` is a string or a list of strings (at most :data:`MAX_INPUTS`); ``encoding_format`` is
``float`` or ``base64`` (little-endian float32, which the official ``openai`` client asks for by
default). Token-id arrays are refused by name: ids from another tokenizer (tiktoken's, as
LangChain sends by default) mean nothing to a local model.
"""

from __future__ import annotations

import base64
from typing import Any

import numpy as np

from desktop_app.engine.api import Embeddings
from desktop_app.server.openai_schema import BadRequest

MAX_INPUTS = 2048  # OpenAI's own limit per request
FIELDS = frozenset({"input", "model", "encoding_format", "dimensions", "user"})
TOKEN_IDS = (
    "'input' must be a string or a list of strings; token ids of another tokenizer cannot be read "
    "(with LangChain's OpenAIEmbeddings, set check_embedding_ctx_length=False)"
)


def parse_embedding_request(body: object) -> tuple[list[str], bool, int | None]:
    """(the texts, base64?, the dimensions asked for) or BadRequest naming the field."""
    if not isinstance(body, dict):
        raise BadRequest("the request body must be a JSON object")
    body = {name: value for name, value in body.items() if value is not None}
    unknown = sorted(set(body) - FIELDS)
    if unknown:
        raise BadRequest(
            f"unknown field '{unknown[0]}' (this endpoint accepts: {', '.join(sorted(FIELDS))})", unknown[0]
        )
    texts = body.get("input")
    if isinstance(texts, str):
        texts = [texts]
    if not isinstance(texts, list) or not texts:
        raise BadRequest("'input' must be a non-empty string or list of strings", "input")
    if not all(isinstance(t, str) for t in texts):
        raise BadRequest(TOKEN_IDS, "input")
    if len(texts) > MAX_INPUTS:
        raise BadRequest(f"'input' holds {len(texts):,} texts; at most {MAX_INPUTS:,} per request", "input")
    encoding = body.get("encoding_format", "float")
    if encoding not in ("float", "base64"):
        raise BadRequest("'encoding_format' must be 'float' or 'base64'", "encoding_format")
    for name in ("model", "user"):
        if name in body and not isinstance(body[name], str):
            raise BadRequest(f"'{name}' must be a string", name)
    wanted = body.get("dimensions")
    if wanted is not None and (isinstance(wanted, bool) or not isinstance(wanted, int)):
        raise BadRequest("'dimensions' must be an integer", "dimensions")
    return texts, encoding == "base64", wanted


def check_dimensions(wanted: int | None, width: int) -> None:
    """This model's vectors have one width: asking for another is refused, never truncated silently."""
    if wanted is not None and wanted != width:
        raise BadRequest(
            f"'dimensions' must be {width} for this model (its vectors have {width} numbers)", "dimensions"
        )


def embedding_response(result: Embeddings, model: str, as_base64: bool) -> dict[str, Any]:
    def encoded(vector: list[float]) -> list[float] | str:
        if as_base64:
            return base64.b64encode(np.asarray(vector, dtype="<f4").tobytes()).decode("ascii")
        return vector

    return {
        "object": "list",
        "data": [{"object": "embedding", "index": i, "embedding": encoded(v)} for i, v in enumerate(result.vectors)],
        "model": model,
        "usage": {"prompt_tokens": result.tokens, "total_tokens": result.tokens},
    }
