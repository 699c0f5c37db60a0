"""The files attached but not sent belong to their conversation, as the box's text does
(:mod:`.input_drafts`): opening another conversation puts them aside, and they come back when
their conversation is opened again, so a file never goes to a conversation it was not given to.
They are kept while the window runs (the box's text is kept in the history; a file's bytes are
kept only once sent). A file still being read when the conversation changes is dropped with the
others being read, as a send drops them.
"""

from __future__ import annotations

from PySide6.QtCore import QObject, Slot
from PySide6.QtGui import QImage

from desktop_app.documents.attachment import Attachment
from desktop_app.ui.composer.attachments import ComposerFiles
from desktop_app.ui.conversations.chat_session import ChatSession


class FilesByConversation(QObject):
    def __init__(self, session: ChatSession, files: ComposerFiles, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.files = files
        self._aside: dict[int, tuple[list[Attachment], dict[int, QImage]]] = {}  # by conversation (0: a new one)
        session.leaving.connect(self._on_leaving)
        session.conversation_changed.connect(self._on_opened)

    @Slot(int)
    def _on_leaving(self, conversation: int) -> None:
        if self.files.files:
            self._aside[conversation] = (list(self.files.files), dict(self.files.icons))
        self.files.clear()

    @Slot(int)
    def _on_opened(self, conversation: int) -> None:
        kept = self._aside.pop(conversation, None)
        if kept is not None and not self.files.files:
            self.files.files, self.files.icons = kept
            self.files.changed.emit()
