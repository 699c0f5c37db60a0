"""Shared fixtures: factory models built once per session, user data in a temp dir.

Test tiers: `make check` runs `pytest -m "not slow"`, `make test` runs everything but the real
coding agents, which `make agents-test` runs (tests/agents/). A test is
slow when it loads a model, starts the engine process, a worker or the real window, or measures
time. Tests that use a fixture in `SLOW_FIXTURES` (directly or through another fixture) are
marked slow here, so a new model test cannot forget it; the rest carry `@pytest.mark.slow` or
a module-level `pytestmark`.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

_BUNDLE = Path(os.environ.get("SPECCHAT_BUNDLE", Path(__file__).resolve().parents[1] / "dist/specchat/specchat"))
# The bundle's own test runs where a bundle was built (`make package-test`), not from a checkout.
collect_ignore = [] if _BUNDLE.exists() else ["test_bundle.py"]
# The real coding agents (tests/agents/) run in their own tier, `make agents-test`, which sets this.
if not os.environ.get("SPECCHAT_AGENTS_TEST"):
    collect_ignore.append("agents")


# Fixtures that load a model or start a process: any test that uses one is slow.
SLOW_FIXTURES = frozenset(
    {
        "models",  # builds the factory GGUFs
        "default_model",  # the embedded SmolLM2
        "hybrid_models",
        "gemma4_pair",
        "vision_model",
        "make_window",  # the real window with its engine process (tests/ui/conftest.py)
        "two_workers",  # llama.cpp RPC worker processes (tests/remote/conftest.py)
    }
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark slow every test that uses a fixture in SLOW_FIXTURES, however indirectly."""
    slow = pytest.mark.slow
    for item in items:
        if SLOW_FIXTURES.intersection(getattr(item, "fixturenames", ())):
            item.add_marker(slow)


@pytest.fixture(scope="session", autouse=True)
def specchat_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """Every test's settings, history and models live in a throwaway SPECCHAT_HOME."""
    home = tmp_path_factory.mktemp("specchat-home")
    old = os.environ.get("SPECCHAT_HOME")
    os.environ["SPECCHAT_HOME"] = str(home)
    yield home
    if old is None:
        os.environ.pop("SPECCHAT_HOME", None)
    else:
        os.environ["SPECCHAT_HOME"] = old


@pytest.fixture(scope="session")
def models(tmp_path_factory: pytest.TempPathFactory):  # -> FactoryModels
    from tests.model_factory import build_all

    return build_all(tmp_path_factory.mktemp("factory-models"))


@pytest.fixture(scope="session")
def default_model() -> Path:
    from desktop_app.engine import default_model_path

    return default_model_path()


@pytest.fixture(scope="session")
def hybrid_models(tmp_path_factory: pytest.TempPathFactory):  # -> HybridModels
    """A qwen35 hybrid target with an MTP head, the same without it, and a mamba (no rollback)."""
    from tests.factory_recurrent import build_hybrid_all

    return build_hybrid_all(tmp_path_factory.mktemp("hybrid-models"))


@pytest.fixture(scope="session")
def gemma4_pair(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A tiny Gemma 4 target and its Gemma 4 assistant drafter."""
    from tests.factory_gemma4 import build_gemma4_pair

    return build_gemma4_pair(tmp_path_factory.mktemp("gemma4-models"))


@pytest.fixture(scope="session")
def vision_model(tmp_path_factory: pytest.TempPathFactory):  # -> VisionModel
    """A tiny text model with its vision projector (mmproj) beside it: .model, .mmproj."""
    from tests.factory_vision import build_vision_model

    return build_vision_model(tmp_path_factory.mktemp("vision-models"))
