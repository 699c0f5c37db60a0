"""Every recurrent test model: the qwen35 hybrids (``tests/factory_hybrid.py``) and the mamba
target that cannot roll back (``tests/factory_mamba.py``), built into one folder."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from tests.factory_hybrid import build_hybrid, build_hybrid_draft, build_hybrid_mtp
from tests.factory_mamba import build_no_rollback


@dataclass(frozen=True)
class HybridModels:
    hybrid_mtp: Path
    hybrid: Path
    no_rollback: Path
    draft: Path


def build_hybrid_all(directory: Path) -> HybridModels:
    return HybridModels(
        build_hybrid_mtp(directory),
        build_hybrid(directory),
        build_no_rollback(directory),
        build_hybrid_draft(directory),
    )


if __name__ == "__main__":
    import sys
    import time

    start = time.perf_counter()
    models = build_hybrid_all(Path(sys.argv[1] if len(sys.argv) > 1 else "build/test-models"))
    print(f"built in {time.perf_counter() - start:.2f}s")
    for name, path in vars(models).items():
        print(f"{name:12} {path.stat().st_size / 1e6:7.2f} MB  {path}")
