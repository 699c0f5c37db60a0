"""Files attached in the real window with the real engine process: a text file (the paperclip), a
PDF (dropped on the message box) and an image (pasted, with the factory vision model), each shown
as a chip with its tokens, counted in the meter, sent to the model, shown in the transcript and
kept across a restart of the window; a bad file said in one line with the typed text kept."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import QMimeData, QPointF, Qt, QUrl
from PySide6.QtGui import QDropEvent, QPageSize, QPainter, QPdfWriter
from PySide6.QtWidgets import QApplication, QFileDialog

from tests.ui.helpers import next_answer

NOTES = "Keeper's log, 12 March: the lamp was lit at dusk and the wind backed to the south-west.\n"
PDF_LINE = "The tide table for Saint Malo says high water at 06:42."


def counted(qtbot: Any, window: Any) -> int:
    """The meter's count of the next prompt, once it is current."""
    qtbot.waitUntil(lambda: not window.context.counting and window.meter.prompt_size is not None, timeout=30_000)
    return int(window.meter.prompt_size.tokens)


def chips_counted(qtbot: Any, window: Any, names: list[str]) -> list[int]:
    """Wait for the composer's chips of these files to show their tokens; the counts."""
    chips = window.attach.chips

    def ready() -> bool:
        return [c.name.text() for c in chips.chips] == names and all(
            c.tokens.text().endswith(" tokens") for c in chips.chips
        )

    qtbot.waitUntil(ready, timeout=30_000)
    return [int(c.tokens.text().split()[0].replace(",", "")) for c in chips.chips]


def send(qtbot: Any, window: Any, text: str = "") -> Any:
    """Type ``text`` (if any) and press Enter; the answer's watch once it ended."""
    with next_answer(qtbot, window.client) as watch:
        window.input.setFocus()
        if text:
            qtbot.keyClicks(window.input, text)
        qtbot.keyClick(window.input, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: not window.session.busy, timeout=5000)
    assert watch.done is not None, watch.failure
    return watch


def type_text(qtbot: Any, window: Any, text: str) -> int:
    """Type ``text`` into the message box; the meter's count once current."""
    window.input.setFocus()
    qtbot.keyClicks(window.input, text)
    return counted(qtbot, window)


def make_pdf(path: Path, lines: list[str]) -> Path:
    """A PDF with a text layer (Qt's PDF writer draws text as text)."""
    writer = QPdfWriter(str(path))
    writer.setPageSize(QPageSize(QPageSize.PageSizeId.A5))
    painter = QPainter(writer)
    for i, line in enumerate(lines):
        painter.drawText(200, 400 + 300 * i, line)
    painter.end()
    return path


def drop(widget: Any, paths: list[Path]) -> None:
    """Drop files on ``widget`` as a file manager does."""
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(p)) for p in paths])
    for kind in (QDropEvent.Type.DragEnter, QDropEvent.Type.Drop):
        if kind == QDropEvent.Type.DragEnter:
            from PySide6.QtGui import QDragEnterEvent

            event: QDropEvent = QDragEnterEvent(
                widget.rect().center(),
                Qt.DropAction.CopyAction,
                mime,
                Qt.MouseButton.NoButton,
                Qt.KeyboardModifier.NoModifier,
            )
        else:
            event = QDropEvent(
                QPointF(widget.rect().center()), Qt.DropAction.CopyAction, mime, Qt.MouseButton.NoButton,
                Qt.KeyboardModifier.NoModifier,
            )  # fmt: skip
        QApplication.sendEvent(widget, event)
        assert event.isAccepted()


def test_a_text_file_is_attached_counted_answered_and_kept(
    qtbot: Any, make_window: Any, models: Any, tmp_path: Path, monkeypatch: Any
) -> None:
    notes = tmp_path / "keeper-log.txt"
    notes.write_text(NOTES)
    window = make_window(target_path=models.target, drafter="none", max_tokens=8)
    typed = type_text(qtbot, window, "When was the lamp lit?")
    monkeypatch.setattr(QFileDialog, "getOpenFileNames", lambda *a, **k: ([str(notes)], ""))
    qtbot.mouseClick(window.attach.button, Qt.MouseButton.LeftButton)
    (tokens,) = chips_counted(qtbot, window, ["keeper-log.txt"])
    assert tokens > 15
    shown = counted(qtbot, window)
    assert abs(shown - (typed + tokens)) <= 3  # the meter counts the file with the typed text
    watch = send(qtbot, window)
    assert watch.done.stats.prompt_tokens == shown  # exactly what the engine read
    sent = watch.handle.request.messages[-1]
    assert 'name="keeper-log.txt"' in sent["content"] and "lamp was lit at dusk" in sent["content"]
    assert sent["content"].endswith("When was the lamp lit?")
    assert not window.attach.chips.isVisible() and window.attach.files.files == []  # sent with the message
