"""What an answer did with the conversation's documents, said on its footer's third line and kept
with its stats (:data:`~desktop_app.ui.transcript.message_format.DOCUMENTS_NOTE`): the passages
its question sent of a document too large for the context ("read passages 3, 7 and 12 of 40 of
report.pdf"), and what it copied from the documents ("copied 60 % from report.pdf",
:mod:`desktop_app.documents.attribution`, worked out on a thread of its own once the answer ends:
a long document takes a noticeable moment)."""

from __future__ import annotations

import contextlib
import sqlite3
import threading

from PySide6.QtCore import QObject, Signal, Slot

from desktop_app.documents.attachment import AttachmentKind
from desktop_app.documents.attribution import copied_shares
from desktop_app.ui.conversations.chat_session import ChatSession
from desktop_app.ui.engine.thread_relay import hold
from desktop_app.ui.transcript.message_format import DOCUMENTS_NOTE


class _SharesRelay(QObject):
    done = Signal(int, object)  # the answer's id, its notes


class AnswerDocuments(QObject):
    """Adds the documents' line to each answer's footer when it ends (see the module).

    Signals:
        noted(int): an answer's footer got its documents' line (the answer's id).
    """

    noted = Signal(int)

    def __init__(self, session: ChatSession, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.session = session
        self.passages: list[str] = []  # what the next answer's question sent of its documents
        session.busy_changed.connect(self._on_busy)

    @Slot(bool)
    def _on_busy(self, busy: bool) -> None:
        if busy:
            return
        session, (notes, self.passages) = self.session, (self.passages, [])
        path = session.shown.messages
        if not path or path[-1].role != "assistant" or not session.view.messages:
            return
        answer_id, text = path[-1].id, session.view.messages[-1].text
        try:
            files = session.history.attachments.of([m.id for m in path if m.role == "user"])
        except sqlite3.Error:
            files = {}
        documents = {f.name: f.text for kept in files.values() for f in kept if f.kind is AttachmentKind.DOCUMENT}
        if not documents and not notes:
            return
        relay = _SharesRelay()
        relay.done.connect(self._show)

        def target() -> None:
            try:
                relay.done.emit(answer_id, notes + [str(share) for share in copied_shares(text, documents)])
            finally:
                relay.deleteLater()

        thread = threading.Thread(target=target, name="answer attribution", daemon=True)
        hold(relay, thread)
        thread.start()

    @Slot(int, object)
    def _show(self, answer_id: int, notes: list[str]) -> None:
        session = self.session
        at = session.shown.position(answer_id)
        index = at - session.view.earlier_count if at is not None else -1
        if not notes or not 0 <= index < len(session.view.messages):
            return  # nothing to say, or no longer shown (another conversation)
        widget = session.view.messages[index]
        if widget.role != "assistant" or not widget.stats:
            return
        stats = {**widget.stats, DOCUMENTS_NOTE: notes}
        widget.set_stats(stats)
        with contextlib.suppress(sqlite3.Error):  # shown; the history's trouble is said where answers are written
            session.history.update_message(answer_id, widget.text, stats)
        self.noted.emit(answer_id)
