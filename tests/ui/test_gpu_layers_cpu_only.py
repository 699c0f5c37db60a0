"""GPU layers only where the loaded llama.cpp has a GPU backend: on a CPU-only build (the engine
process's Ready says "CPU") the model bar's GPU-layer boxes are hidden and disabled, their tooltip
says why;
workers make the target's meaningful again (issue 49, item 11)."""

from __future__ import annotations

import os
from typing import Any

from desktop_app.engine_process.protocol import Ready
from tests.ui.helpers import tip_text


def test_gpu_layers_are_disabled_with_a_reason_on_a_cpu_only_build(qtbot: Any, make_window: Any) -> None:
    window = make_window()
    info = window.client.info
    assert info is not None
    bar = window.model_bar
    if info.backend_name.upper() != "CPU":  # a GPU build: the boxes are there to use
        assert bar.target_gpu.isEnabled() and bar.draft_gpu.isEnabled()
        return
    for spin in (bar.target_gpu, bar.draft_gpu):
        assert not spin.isEnabled() and not spin.isVisible()
        assert "no GPU backend" in tip_text(spin.toolTip()) and "runs on the CPU" in tip_text(spin.toolTip())
    if os.environ.get("SPECCHAT_SHOTS"):
        window.grab().save(os.path.join(os.environ["SPECCHAT_SHOTS"], "cpu-only-model-bar.png"))
    dialog = window.preferences.open()  # Preferences → Model: its GPU-layer fields off too, saying why
    for name in ("n_gpu_layers", "draft_n_gpu_layers"):
        assert not dialog.fields[name].isEnabled() and "no GPU backend" in tip_text(dialog.fields[name].toolTip())
    dialog.reject()

    window.client.engine_started.emit(Ready(info.pid, "CUDA: RTX", "CUDA", "RTX 4090"))  # a GPU build's Ready
    assert bar.target_gpu.isEnabled() and bar.draft_gpu.isEnabled() and bar.draft_gpu.isVisible()
    assert tip_text(bar.target_gpu.toolTip()) == "Target layers on the GPU"

    window.settings.set("workers", "192.168.1.20:50052")  # a CPU build with workers: target layers go there
    window.client.engine_started.emit(info)
    assert bar.target_gpu.isVisible() and not bar.draft_gpu.isVisible()
