"""The same body gets the same validation answer on every endpoint that takes it: a shared field
of the wrong type (``"stream": "false"`` once streamed on three endpoints and was a 400 on the
fourth), a number out of the engine's range, a field at other than its neutral value, a field
nobody declares: a 400 naming the field everywhere; llama.cpp's fields at usable values: answered
everywhere. The real server on the factory's FIM model (its template chats too, so /infill answers)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx2 as httpx
import pytest

from tests.server.conftest import serving
from tests.server.live_server import Server

# Each endpoint's smallest answerable body (a two-token answer).
BASES: dict[str, dict[str, Any]] = {
    "v1/chat/completions": {"messages": [{"role": "user", "content": "Hi"}], "max_tokens": 2},
    "v1/completions": {"prompt": "Hi", "max_tokens": 2},
    "v1/responses": {"input": "Hi", "max_output_tokens": 2},
    "v1/messages": {"messages": [{"role": "user", "content": "Hi"}], "max_tokens": 2},
    "v1/messages/count_tokens": {"messages": [{"role": "user", "content": "Hi"}]},
    "infill": {"input_prefix": "def add(a, b):\n    return ", "input_suffix": "\n", "n_predict": 2},
}
REFUSED: list[tuple[str, Any]] = [
    ("stream", "false"),
    ("stream", 0),
    ("temperature", "0.5"),
    ("temperature", 7),
    ("top_p", []),
    ("top_k", 1.5),
    ("top_k", -1),
    ("min_p", "x"),
    ("min_p", 1.5),
    ("repeat_penalty", True),
    ("repeat_penalty", 0),
    ("seed", "1"),
    ("model", 5),
    ("speculation", 1),
    ("speculation", "sometimes"),
    ("typical_p", 0.5),
    ("mirostat", 2),
    ("dry_multiplier", 0.8),
    ("max_token", 5),
]
ACCEPTED: list[dict[str, Any]] = [
    {"top_k": 40, "min_p": 0.05, "repeat_penalty": 1.1, "repeat_last_n": 16, "seed": -1},
    {"cache_prompt": True, "samplers": ["top_k", "top_p"], "t_max_predict_ms": 1000, "id_slot": 0},
    {"typical_p": 1, "mirostat": 0, "mirostat_tau": 5, "dry_multiplier": 0, "xtc_probability": 0, "n_probs": 0},
    {"temperature": 0.7, "top_p": 0.9, "seed": 7, "speculation": "off", "model": "any"},
    {"stream": None, "top_k": None, "seed": None},
]


@pytest.fixture(scope="module")
def server(models: Any) -> Iterator[Server]:
    with serving(models.fim) as served:
        yield served


def _post(server: Server, path: str, body: dict[str, Any]) -> httpx.Response:
    return httpx.post(f"{server.base}/{path}", json=body, timeout=120)


def _message(reply: httpx.Response) -> str:
    return str(reply.json()["error"]["message"])


@pytest.mark.parametrize(("name", "value"), REFUSED, ids=[f"{n}={v!r}" for n, v in REFUSED])
def test_a_bad_field_is_a_400_naming_it_on_every_endpoint(server: Server, name: str, value: Any) -> None:
    answers = {path: _post(server, path, {**base, name: value}) for path, base in BASES.items()}
    statuses = {path: reply.status_code for path, reply in answers.items()}
    assert set(statuses.values()) == {400}, statuses
    for path, reply in answers.items():
        assert name in _message(reply), (path, _message(reply))
    if name != "max_token":  # the same message everywhere (an unknown field's lists the endpoint's fields)
        assert len({_message(reply) for reply in answers.values()}) == 1, {p: _message(r) for p, r in answers.items()}


@pytest.mark.parametrize("extra", ACCEPTED, ids=[",".join(e) for e in ACCEPTED])
def test_llama_cpps_fields_at_usable_values_are_answered_on_every_endpoint(
    server: Server, extra: dict[str, Any]
) -> None:
    statuses = {path: _post(server, path, {**base, **extra}).status_code for path, base in BASES.items()}
    assert set(statuses.values()) == {200}, statuses


STOP_TAKERS = ("v1/chat/completions", "v1/completions", "infill")  # OpenAI's and llama.cpp's "stop"


@pytest.mark.parametrize("value", [5, [1], ["a"] * 5, [""], {"a": "b"}])
def test_a_bad_stop_is_the_same_400_where_stop_is_taken(server: Server, value: Any) -> None:
    answers = {path: _post(server, path, {**BASES[path], "stop": value}) for path in STOP_TAKERS}
    assert {reply.status_code for reply in answers.values()} == {400}, {p: r.text for p, r in answers.items()}
    assert len({_message(reply) for reply in answers.values()}) == 1, {p: _message(r) for p, r in answers.items()}


def test_a_stop_string_or_list_is_taken_where_stop_is(server: Server) -> None:
    for value in ("\n", ["\n", "END"]):
        assert {_post(server, path, {**BASES[path], "stop": value}).status_code for path in STOP_TAKERS} == {200}
