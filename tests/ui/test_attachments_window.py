"""Files attached in the real window with the real engine process: a text file (the paperclip), a
PDF (dropped on the message box) and an image (pasted, with the factory vision model), each shown
as a chip with its tokens, counted in the meter, sent to the model, shown in the transcript and
kept across a restart of the window; a bad file said in one line with the typed text kept."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

from PIL import Image
from PySide6.QtCore import QMimeData, QPointF, QSize, Qt, QUrl
from PySide6.QtGui import QDragEnterEvent, QDropEvent, QGuiApplication, QImage, QPageSize, QPainter, QPdfWriter
from PySide6.QtWidgets import QApplication, QFileDialog, QPlainTextEdit, QToolButton

from desktop_app.engine.messages import IMAGE_MARKER
from desktop_app.store.message_files import UNSEEN_IMAGE
from desktop_app.ui.transcript.message_files import FileChips, FileViewer
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


def shown_files(window: Any) -> list[str]:
    """The files shown under your messages in the transcript, in order."""
    return [b.text() for w in window.chat_view.messages for c in w.findChildren(FileChips) for b in c.buttons]


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
    assert shown_files(window) == ["keeper-log.txt · 88 bytes · 88 characters read"]
    (chip,) = [b for w in window.chat_view.messages for c in w.findChildren(FileChips) for b in c.buttons]
    qtbot.mouseClick(chip, Qt.MouseButton.LeftButton)  # shows the text the model read
    (viewer,) = window.findChildren(FileViewer)
    assert viewer.isVisible() and viewer.findChild(QPlainTextEdit).toPlainText() == NOTES
    viewer.close()
    # a new window on the same history: the file is shown with its message and read again by the model
    conversation = window.session.conversation_id
    window.close()
    again = make_window(target_path=models.target, drafter="none", max_tokens=8)
    assert again.session.conversation_id == conversation
    assert shown_files(again) == ["keeper-log.txt · 88 bytes · 88 characters read"]
    watch = send(qtbot, again, "And the wind?")
    first = watch.handle.request.messages[0]
    assert first["role"] == "user" and "lamp was lit at dusk" in first["content"]


def test_a_pdf_dropped_on_the_box_is_read_and_answered(
    qtbot: Any, make_window: Any, models: Any, tmp_path: Path
) -> None:
    pdf = make_pdf(tmp_path / "tides.pdf", [PDF_LINE])
    window = make_window(target_path=models.target, drafter="none", max_tokens=8)
    typed = type_text(qtbot, window, "When is high water?")
    drop(window.input, [pdf])
    (tokens,) = chips_counted(qtbot, window, ["tides.pdf"])
    shown = counted(qtbot, window)
    assert tokens > 10 and abs(shown - (typed + tokens)) <= 3
    assert window.input.toPlainText() == "When is high water?"  # the drop added no text
    watch = send(qtbot, window)
    assert watch.done.stats.prompt_tokens == shown
    sent = watch.handle.request.messages[-1]["content"]
    assert 'name="tides.pdf"' in sent and "high water at 06:42" in " ".join(sent.split())  # the PDF's text layer
    conversation = window.session.conversation_id
    window.close()
    again = make_window(target_path=models.target, drafter="none", max_tokens=8)
    assert again.session.conversation_id == conversation
    (chip,) = shown_files(again)
    assert chip.startswith("tides.pdf · ")


def test_an_image_pasted_is_seen_by_a_vision_model(
    qtbot: Any, make_window: Any, vision_model: Any, models: Any
) -> None:
    window = make_window(target_path=vision_model.model, drafter="none", max_tokens=8)
    typed = type_text(qtbot, window, "What colour is it?")
    image = QImage(48, 32, QImage.Format.Format_RGB32)
    image.fill(Qt.GlobalColor.red)
    QGuiApplication.clipboard().setImage(image)
    qtbot.keyClick(window.input, Qt.Key.Key_V, Qt.KeyboardModifier.ControlModifier)
    (tokens,) = chips_counted(qtbot, window, ["pasted image 1.png"])
    assert window.input.toPlainText() == "What colour is it?"
    shown = counted(qtbot, window)
    assert tokens > 0 and abs(shown - (typed + tokens)) <= 3  # the image's embeddings counted
    watch = send(qtbot, window)
    sent = watch.handle.request.messages[-1]
    assert sent["content"].count(IMAGE_MARKER) == 1 and len(sent.get("images", [])) == 1
    assert Image.open(io.BytesIO(sent["images"][0])).size == (48, 32)  # the pasted image, as a PNG
    assert watch.done.stats.prompt_tokens == shown
    thumbnails = [b for w in window.chat_view.messages for b in w.findChildren(QToolButton, "messageImage")]
    assert len(thumbnails) == 1
    qtbot.waitUntil(lambda: thumbnails[0].iconSize() == QSize(48, 32), timeout=5000)  # made off the GUI thread
    conversation = window.session.conversation_id
    window.close()
    again = make_window(target_path=vision_model.model, drafter="none", max_tokens=8)
    assert again.session.conversation_id == conversation
    assert shown_files(again) == ["pasted image 1.png"]
    watch = send(qtbot, again, "And now?")
    assert watch.handle.request.messages[0].get("images") == sent["images"]  # the history's image, sent again
    again.close()
    # the conversation goes on with a text model: the image is said in words, the answer comes
    text_only = make_window(target_path=models.target, drafter="none", max_tokens=8)
    watch = send(qtbot, text_only, "Go on")
    first = watch.handle.request.messages[0]
    assert "images" not in first and UNSEEN_IMAGE in first["content"] and IMAGE_MARKER not in first["content"]


def test_an_image_for_a_model_that_cannot_see_and_a_bad_file_are_said(
    qtbot: Any, make_window: Any, models: Any, tmp_path: Path
) -> None:
    picture = tmp_path / "chart.png"
    Image.new("RGB", (20, 20), (0, 90, 200)).save(picture)
    bad = tmp_path / "data.bin"
    bad.write_bytes(b"\x00\x01\x02binary\x00" * 50)
    window = make_window(target_path=models.target, drafter="none", max_tokens=8)
    type_text(qtbot, window, "Look at this")
    drop(window.chat_view, [picture, bad])  # on the transcript: the window takes it
    qtbot.waitUntil(lambda: not window.attach.files.reading, timeout=10_000)
    assert [c.name.text() for c in window.attach.chips.chips] == ["chart.png"]
    assert window.notices == [] and window.statusBar().currentMessage().startswith("data.bin")
    assert "\n" not in window.statusBar().currentMessage()
    chip = window.attach.chips.chips[0]
    qtbot.waitUntil(lambda: chip.tokens.text() == "not seen by this model", timeout=10_000)
    assert counted(qtbot, window) > 0  # the meter still counts: the image as the line a text model would read
    started: list[Any] = []
    window.client.generation_started.connect(started.append)
    qtbot.keyClick(window.input, Qt.Key.Key_Return)
    assert window.statusBar().currentMessage().startswith("The loaded model cannot see images")
    assert started == [] and window.input.toPlainText() == "Look at this"  # nothing sent, nothing lost
    qtbot.mouseClick(chip.remove, Qt.MouseButton.LeftButton)
    assert window.attach.chips.chips == [] and not window.attach.chips.isVisible()


def manual_text(sections: int) -> str:
    """A long document: numbered sections, each a paragraph of its own facts."""
    return "\n\n".join(
        f"Section {i}. The pump in bay {i} runs at {100 + i} litres a minute; its filter is changed every {i + 3} "
        f"weeks, and its spare parts are kept on shelf {i * 7}. The inspector signs the bay {i} log each Friday."
        for i in range(1, sections + 1)
    )


def test_a_document_larger_than_the_context_is_answered_from_ranked_passages(
    qtbot: Any, make_window: Any, models: Any, tmp_path: Path
) -> None:
    manual = tmp_path / "pump-manual.md"
    manual.write_text(manual_text(120))
    window = make_window(target_path=models.target, drafter="none", max_tokens=8, n_ctx=1024)
    type_text(qtbot, window, "How often is the filter in bay 42 changed")
    drop(window.input, [manual])
    (tokens,) = chips_counted(qtbot, window, ["pump-manual.md"])
    counted(qtbot, window)
    size = window.meter.prompt_size
    assert tokens > size.n_ctx and size.over  # the meter shows it does not fit
    said: list[str] = []
    window.statusBar().messageChanged.connect(said.append)
    watch = send(qtbot, window, "?")  # Enter as the typing pauses: the send waits for the count that decides
    assert said[:2] == [
        "Counting the documents' tokens: your message goes once they are counted",
        "pump-manual.md does not fit the context: searching it for the passages your question needs…",
    ]
    sent = watch.handle.request.messages[-1]["content"]
    assert 'name="pump-manual.md"' in sent and "[passage " in sent and " of " in sent
    assert len(sent) < len(manual.read_text()) / 2  # passages, not the whole document
    assert watch.done.stats.prompt_tokens <= size.limit and watch.done.stats.dropped_turns == 0
    answer = window.chat_view.messages[-1]
    qtbot.waitUntil(lambda: "read passages" in answer.footer.text(), timeout=30_000)
    line = answer.footer.text().splitlines()[-1]
    assert line.startswith("read passages ") and line.endswith(" of pump-manual.md")
    kept = window.history.attachments.of([window.session.shown.messages[-2].id])
    assert "[passage " in next(iter(kept.values()))[0].text  # the history keeps what the model read
    conversation = window.session.conversation_id
    window.close()
    again = make_window(target_path=models.target, drafter="none", max_tokens=8, n_ctx=1024)
    assert again.session.conversation_id == conversation
    assert again.chat_view.messages[-1].footer.text().splitlines()[-1] == line  # kept with the answer's stats


def test_the_footer_says_what_an_answer_copied_from_a_document(
    qtbot: Any, make_window: Any, tmp_path: Path, monkeypatch: Any
) -> None:
    motto = tmp_path / "motto.txt"
    motto.write_text(
        "The harbour master said: every ship that enters the port must fly a yellow flag until the doctor "
        "has come aboard."
    )
    window = make_window(drafter="none", max_tokens=48)  # the built-in model: it quotes when asked
    monkeypatch.setattr(QFileDialog, "getOpenFileNames", lambda *a, **k: ([str(motto)], ""))
    qtbot.mouseClick(window.attach.button, Qt.MouseButton.LeftButton)
    chips_counted(qtbot, window, ["motto.txt"])
    watch = send(qtbot, window, "What did the harbour master say? Quote it.")
    assert "yellow flag until the doctor has come aboard" in watch.done.text
    answer = window.chat_view.messages[-1]
    qtbot.waitUntil(lambda: " % from motto.txt" in answer.footer.text(), timeout=30_000)
    line = answer.footer.text().splitlines()[-1]
    share = int(line.removeprefix("copied ").split(" %")[0])
    assert line == f"copied {share} % from motto.txt" and share >= 50
    stored = window.history.messages(window.session.conversation_id)[-1].stats
    assert stored["documents"] == [line]  # kept with the answer


def test_unsent_files_stay_with_their_conversation(
    qtbot: Any, make_window: Any, models: Any, tmp_path: Path, monkeypatch: Any
) -> None:
    notes = tmp_path / "keeper-log.txt"
    notes.write_text(NOTES)
    window = make_window(target_path=models.target, drafter="none", max_tokens=4)
    send(qtbot, window, "Hello")
    first = window.session.conversation_id
    monkeypatch.setattr(QFileDialog, "getOpenFileNames", lambda *a, **k: ([str(notes)], ""))
    qtbot.mouseClick(window.attach.button, Qt.MouseButton.LeftButton)
    chips_counted(qtbot, window, ["keeper-log.txt"])
    window.session.open(None)  # New chat: the file is not this conversation's
    qtbot.waitUntil(lambda: window.attach.files.files == [] and not window.attach.chips.isVisible(), timeout=5000)
    watch = send(qtbot, window, "Anything?")
    assert "keeper-log.txt" not in watch.handle.request.messages[-1]["content"]
    window.session.open(first)  # back: the file is there again, counted, and goes with the next message
    chips_counted(qtbot, window, ["keeper-log.txt"])
    watch = send(qtbot, window, "When was the lamp lit?")
    assert 'name="keeper-log.txt"' in watch.handle.request.messages[-1]["content"]
