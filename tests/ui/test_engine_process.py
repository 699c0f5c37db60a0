"""The engine's child process: crashes never close the window, load failures are messages."""

from __future__ import annotations

import os
import re
import signal
from typing import Any

import pytest
from PySide6.QtCore import Qt

from desktop_app.engine.api import GenerateRequest, Message
from desktop_app.ui.engine.engine_client import EngineClient, crash_reason
from tests.ui.conftest import ANSWER_TIMEOUT_MS, LOAD_TIMEOUT_MS
from tests.ui.helpers import last_answer, send_and_wait, tip_text, type_and_send


def test_killing_the_engine_mid_answer_shows_the_banner_and_restart_works(qtbot: Any, make_window: Any) -> None:
    window = make_window(drafter="none", max_tokens=3000)
    send_and_wait(qtbot, window, "Say hi")
    type_and_send(qtbot, window, "Write a very long story about a lighthouse keeper.")
    qtbot.waitUntil(lambda: len(last_answer(window).text) > 40, timeout=ANSWER_TIMEOUT_MS)
    pid = window.client.pid
    assert pid is not None and pid != os.getpid()
    with qtbot.waitSignal(window.client.engine_crashed, timeout=30_000) as crashed:
        os.kill(pid, signal.SIGKILL)
    assert "killed" in crashed.args[0]
    banner = window.banner
    assert banner.isVisible() and "killed" in banner.message.text()
    assert window.isVisible()
    # the partial answer is kept on screen and in the history
    shown = last_answer(window).text
    footer = last_answer(window).footer.text()
    assert (
        shown and "interrupted: The engine was killed" in footer and not re.search(r"(?<![\d.])0 tokens(?!/)", footer)
    )  # "10 tokens" and "50.0 tokens/s" are fine
    stored = window.history.messages(window.session.conversation_id)
    assert [m.role for m in stored] == ["user", "assistant", "user", "assistant"]
    assert stored[-1].content == shown
    assert not window.send_button.isEnabled()
    # restart: a new process with the same model, and the conversation goes on
    with qtbot.waitSignal(window.client.model_loaded, timeout=LOAD_TIMEOUT_MS):
        qtbot.mouseClick(banner.restart, Qt.MouseButton.LeftButton)
    assert not banner.isVisible()
    assert window.client.pid not in (None, pid)
    window.side.max_tokens.setValue(20)
    send_and_wait(qtbot, window, "Are you back?")
    assert len(window.history.messages(window.session.conversation_id)) == 6
    assert len(window.chat_view.messages) == 6


def test_an_incompatible_draft_shows_why_in_the_badge(qtbot: Any, make_window: Any, models: Any) -> None:
    window = make_window(target_path=models.target)
    with qtbot.waitSignal(window.client.model_loaded, timeout=LOAD_TIMEOUT_MS) as loaded:
        window.model_bar.choose_draft(str(models.draft_other_vocab))
    assert loaded.args[0].draft is None
    badge = window.model_bar.badge
    assert badge.objectName() == "compatBadge"
    assert "incompatible" in badge.text()
    assert "token 300 differs" in badge.text() and "different tokenizer" in badge.toolTip()
    # the target still answers
    send_and_wait(qtbot, window, "Still there?")
    assert last_answer(window).text
    # a draft that fits clears the warning
    with qtbot.waitSignal(window.client.model_loaded, timeout=LOAD_TIMEOUT_MS) as loaded:
        window.model_bar.choose_draft(str(models.draft))
    assert loaded.args[0].draft.name == models.draft.stem
    assert badge.text() == "✓ draft fits"
    assert window.drafter().value == "model"  # what the next answer drafts with
    assert "+ draft draft" in window.status.models.text()


@pytest.mark.parametrize("which", ["not_gguf", "truncated", "unknown_arch"])
def test_a_broken_target_is_a_message_and_the_old_model_stays(
    qtbot: Any, make_window: Any, models: Any, which: str
) -> None:
    window = make_window(target_path=models.target, max_tokens=10)
    with qtbot.waitSignal(window.client.load_failed, timeout=LOAD_TIMEOUT_MS) as failed:
        window.model_bar.choose_target(str(getattr(models, which)))
    reason = failed.args[0].message
    assert reason and "Traceback" not in reason
    assert reason in tip_text(window.load_banner.message.toolTip())  # what the user reads
    assert window.load_banner.isVisible()
    assert window.client.running and not window.banner.isVisible()
    send_and_wait(qtbot, window, "hello")  # the factory target is still loaded
    assert last_answer(window).text


@pytest.mark.slow  # starts the engine process
def test_a_failed_generation_is_reported_and_the_process_lives_on(qtbot: Any) -> None:
    client = EngineClient()
    try:
        client.start()
        handle = client.generate(GenerateRequest(messages=[Message(role="user", content="hi")], max_tokens=5))
        with qtbot.waitSignal(handle.failed, timeout=LOAD_TIMEOUT_MS) as failed:
            pass
        assert "No target model is loaded" in failed.args[0]
        assert client.running and not client.busy
    finally:
        client.shutdown()
    assert not client.running


@pytest.mark.parametrize(
    ("code", "words"),
    [
        (-signal.SIGSEGV, "segmentation fault"),
        (-signal.SIGKILL, "killed"),
        (3, "exit code 3"),
        (None, "stopped answering"),
    ],
)
def test_crash_reasons_are_readable(code: int | None, words: str) -> None:
    assert words in crash_reason(code)


def test_a_segfault_in_the_engine_is_reported_as_such(qtbot: Any, make_window: Any, models: Any) -> None:
    window = make_window(target_path=models.target)
    with qtbot.waitSignal(window.client.engine_crashed, timeout=30_000) as crashed:
        os.kill(window.client.pid, signal.SIGSEGV)
    assert "segmentation fault" in crashed.args[0]
    assert "segmentation fault" in window.banner.message.text()


def test_the_window_process_never_loads_llama_cpp() -> None:
    # llama.cpp (and numpy) live in the engine process only: the window stays small and a native
    # crash can only take the engine down.
    import subprocess
    import sys

    code = (
        "import sys, desktop_app.ui.app, desktop_app.ui.main_window;"
        "bad=[m for m in sys.modules if m.split('.')[0] in ('llama_cpp', 'numpy')];"
        "print(bad); sys.exit(bool(bad))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
