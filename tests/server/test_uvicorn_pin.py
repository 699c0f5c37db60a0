"""desktop_app/server/http_server.py subclasses uvicorn's internal ``H11Protocol``, which is no
public API: pyproject.toml pins uvicorn to the minor release it was checked against. When that pin
moves, these tests say in words what the new release no longer has, before any connection test
fails for an obscure reason (an override never called, an attribute gone)."""

from __future__ import annotations

import inspect
import re

import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol, RequestResponseCycle

from desktop_app.server.http_server import GuardedH11Protocol

# What GuardedH11Protocol reads of the instance that uvicorn's class sets up, and of its cycle.
USED_ATTRIBUTES = ("conn", "transport", "loop", "cycle")
USED_CYCLE_ATTRIBUTES = ("response_complete",)


def _overrides() -> dict[str, inspect.Signature]:
    """The public methods GuardedH11Protocol redefines (its own helpers start with ``_``)."""
    return {
        name: inspect.signature(member)
        for name, member in vars(GuardedH11Protocol).items()
        if inspect.isfunction(member) and not name.startswith("_")
    }


def test_every_overridden_method_is_still_uvicorns() -> None:
    assert _overrides(), "GuardedH11Protocol overrides nothing: this test no longer checks anything"
    missing = [name for name in _overrides() if not callable(getattr(H11Protocol, name, None))]
    assert not missing, (
        f"uvicorn {uvicorn.__version__}'s H11Protocol has no {', '.join(missing)}: GuardedH11Protocol "
        "(desktop_app/server/http_server.py) overrides them, and the override would never be called. "
        "Port it to this release or keep pyproject.toml's uvicorn pin."
    )


def test_the_overrides_take_uvicorns_arguments() -> None:
    changed = {
        name: f"ours {ours}, uvicorn's {theirs}"
        for name, ours in _overrides().items()
        if hasattr(H11Protocol, name)
        and list(ours.parameters) != list((theirs := inspect.signature(getattr(H11Protocol, name))).parameters)
    }
    assert not changed, (
        f"uvicorn {uvicorn.__version__}'s H11Protocol takes other arguments than GuardedH11Protocol's "
        f"overrides (desktop_app/server/http_server.py): {changed}"
    )


def _assigned(cls: type) -> set[str]:
    return set(re.findall(r"self\.(\w+)\s*(?::[^=\n]+)?=(?!=)", inspect.getsource(cls)))


def test_the_attributes_read_are_still_set() -> None:
    missing = [a for a in USED_ATTRIBUTES if a not in _assigned(H11Protocol)]
    missing += [f"cycle.{a}" for a in USED_CYCLE_ATTRIBUTES if a not in _assigned(RequestResponseCycle)]
    assert not missing, (
        f"uvicorn {uvicorn.__version__}'s H11Protocol no longer sets {', '.join(missing)}, which "
        "GuardedH11Protocol (desktop_app/server/http_server.py) reads"
    )
