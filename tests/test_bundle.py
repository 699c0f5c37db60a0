"""The installed app (PyInstaller bundle) passes its self-test offline.

Run by ``make package-test`` (which builds the bundle first and sets SPECCHAT_BUNDLE);
``make test`` collects it only when a bundle exists (see conftest.py).
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BUNDLE = Path(os.environ.get("SPECCHAT_BUNDLE", ROOT / "dist" / "specchat" / "specchat")).resolve()


def test_bundle_self_test_passes_offline(tmp_path: Path) -> None:
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "HF_HUB_OFFLINE": "1", "SPECCHAT_HOME": str(tmp_path)}
    env.pop("SPECCHAT_DEFAULT_MODEL", None)
    out = subprocess.run(
        [str(BUNDLE), "--self-test"], capture_output=True, text=True, timeout=300, env=env, cwd=tmp_path
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert "identical" in out.stdout
    assert "backend:" in out.stdout
    assert "RPC backend is built in" in out.stdout  # the bundle carries libggml-rpc: `specchat worker` works


def test_bundle_reports_its_version() -> None:
    from desktop_app import __version__

    out = subprocess.run([str(BUNDLE), "--version"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0
    assert out.stdout.strip() == f"specchat {__version__}"
