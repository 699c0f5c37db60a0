"""The real window on a screen of a given size and scale, measured: run as
``python -m tests.ui.window_probe WIDTH HEIGHT SIDE_PANEL`` in a process of its own (Qt's screen
size and QT_SCALE_FACTOR are fixed when it starts; see tests/ui/test_small_screens.py), with
SPECCHAT_HOME set. It prints what the tests check as JSON; with SPECCHAT_SHOT set, it saves a
screenshot there too. The engine is not started: sizes are the window's own."""

from __future__ import annotations

import json
import os
import sys
from typing import Any

from PySide6.QtCore import QCoreApplication, QPoint, QRect
from PySide6.QtWidgets import QApplication, QLabel, QWidget

from desktop_app.engine.context_size import PromptSize, RaiseOffer
from desktop_app.store import History, Settings
from desktop_app.ui.transcript.text_label import label_document
from desktop_app.ui.widgets.elided_label import ElidedLabel

PROSE = (
    "Speculative decoding lets a small draft model propose several tokens that the large model then checks "
    "in a single pass, so that when the guesses are right the answer comes faster, and exactly as the large "
    "model would have written it. "
) * 3
ANSWER = f"{PROSE}\n\n```python\ndef accept(draft, target):\n    return draft[:k]  # the guesses\n```\n\nThat is all."


def settle() -> None:
    for _ in range(5):
        QCoreApplication.sendPostedEvents()
        QCoreApplication.processEvents()


def inside(widget: QWidget, window: QWidget) -> bool:
    return window.rect().contains(QRect(widget.mapTo(window, QPoint(0, 0)), widget.size()))


def shown_whole(label: QLabel) -> bool:
    """All of ``label``'s text is on screen: elided by design, wrapped in its height, or one line that fits."""
    if isinstance(label, ElidedLabel):
        return True
    if label.wordWrap():
        return label.heightForWidth(label.width()) <= label.height()
    return label.fontMetrics().horizontalAdvance(label.text()) <= label.contentsRect().width()


def longest_line(label: QLabel) -> int:
    """The most characters on one line of ``label``'s wrapped text, at its width."""
    doc = label_document(label.text(), label.font())
    doc.setTextWidth(label.contentsRect().width())
    doc.documentLayout().documentSize()  # laid out now
    most, block = 0, doc.begin()
    while block.isValid():
        layout = block.layout()
        most = max([most, *(layout.lineAt(i).textLength() for i in range(layout.lineCount()))])
        block = block.next()
    return most


def measure(width: int, height: int, side_panel: str) -> dict[str, Any]:
    from desktop_app.ui.main_window import MainWindow

    app = QApplication.instance() or QApplication(sys.argv)
    settings = Settings.load()
    settings.set("side_panel", side_panel)
    settings.save()
    window = MainWindow(Settings.load(), History())
    window.show()
    window.resize(width, height)
    settle()
    window.chat_view.add_message("user", "How does speculative decoding work?")
    answer = window.chat_view.add_message("assistant", ANSWER, {"generated_tokens": 80})
    window.meter.show_size(PromptSize(430, 512, 400, 7))
    window.meter.show_offer(RaiseOffer(4096, 512, 10**8, 10**10, 16_384))
    status = window.status
    status.backend.setText("⚠ CUDA · NVIDIA GeForce RTX 4090 Laptop GPU")
    status.models.setText("Qwen2.5-7B-Instruct (Q4_K_M, ctx 512) + draft Qwen2.5-0.5B-Instruct")
    status.threads.setText("2 threads: measured on the live model")
    status.memory.setText("memory 1,234 MiB")
    settle()
    view = window.chat_view
    label = answer.content.answer_text.label
    centre = answer.mapTo(view.viewport(), QPoint(answer.width() // 2, 0)).x()
    parts = (status.backend, status.models, status.threads, status.memory)
    if shot := os.environ.get("SPECCHAT_SHOT"):
        window.grab().save(shot)
    result = {
        "window": [window.width(), window.height()],
        "transcript": view.viewport().width(),
        "sideways": view.horizontalScrollBar().maximum(),
        "meter_whole": shown_whole(window.meter.label) and inside(window.meter.label, window),
        "status_inside": all(inside(p, window) for p in parts) and inside(status, window),
        "status_whole": all(shown_whole(p) for p in parts),
        "longest_line": longest_line(label),
        "off_centre": abs(centre - view.viewport().width() // 2),
        "panel_shown": window.side_fold.area.isVisible(),
    }
    window.close()
    app.processEvents()
    return result


if __name__ == "__main__":
    print(json.dumps(measure(int(sys.argv[1]), int(sys.argv[2]), sys.argv[3])))
