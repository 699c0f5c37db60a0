"""Attachments in the window's composer, wired: the chips above the message box and the
paperclip beside it, drops on the window and the box, pastes, each file's token count (the
engine's, as the meter counts), the meter counting the files with the typed text, and sending.

Sending: a file still being read, or an image the loaded model cannot see, stops the send with
one line (the text and the files stay). Documents too large for the context are searched first
(:mod:`desktop_app.ui.composer.passage_search`, off the GUI thread, with the engine's
embeddings): the message carries their chosen passages, and the answer's footer names them.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject, Slot
from PySide6.QtWidgets import QBoxLayout, QWidget

from desktop_app.documents.attachment import Attachment, AttachmentKind
from desktop_app.documents.prompt_text import to_message
from desktop_app.engine.api import GenerateRequest, LoadedModels, Message
from desktop_app.engine.context_size import PromptSize
from desktop_app.store.message_files import unseen
from desktop_app.ui.composer.attachment_chips import BLIND, AttachButton, ComposerChips
from desktop_app.ui.composer.attachments import ComposerFiles, FileDrops
from desktop_app.ui.composer.files_by_conversation import FilesByConversation
from desktop_app.ui.composer.input_drafts import InputDrafts
from desktop_app.ui.composer.message_input import MessageInput
from desktop_app.ui.composer.passage_search import PassageSearch, SearchResult
from desktop_app.ui.context.context_watch import ContextWatch
from desktop_app.ui.conversations.answer_documents import AnswerDocuments
from desktop_app.ui.conversations.chat_session import ChatSession
from desktop_app.ui.engine.engine_client import EngineClient
from desktop_app.ui.transcript.message_files import MessageFiles

SLACK_PERCENT = 5  # of the room for documents, left for the counts' rounding (passages are counted at a rate)
RequestFor = Callable[[list[Message], str | None], GenerateRequest]


def place(box: MessageInput, chips: QWidget, button: QWidget) -> None:
    """The chips just above the message box's row, the paperclip at the row's start."""
    parent = box.parentWidget()
    column = parent.layout() if parent is not None else None
    if not isinstance(column, QBoxLayout):
        return
    for index in range(column.count()):
        item = column.itemAt(index)
        row = item.layout() if item is not None else None
        if isinstance(row, QBoxLayout) and row.indexOf(box) >= 0:
            row.insertWidget(0, button)
            column.insertWidget(index, chips)
            return


class AttachmentComposer(QObject):
    """The composer's files (:class:`ComposerFiles`), their chips and the paperclip, and the
    send that takes them along (:meth:`send`, the window's Enter and Send)."""

    def __init__(
        self,
        window: QWidget,
        box: MessageInput,
        session: ChatSession,
        drafts: InputDrafts,
        client: EngineClient,
        context: ContextWatch,
        request_for: RequestFor,
        show_error: Callable[[str], None],
    ) -> None:
        super().__init__(window)
        self.session, self.drafts, self.client, self.request_for = session, drafts, client, request_for
        self.show_error = show_error
        self.files = ComposerFiles(self)
        self.by_conversation = FilesByConversation(session, self.files, self)  # unsent files stay with their chat
        self.chips = ComposerChips(self.files)
        self.button = AttachButton(self.files)
        place(box, self.chips, self.button)
        self.shown = MessageFiles(session.view, session.shown, session.history, self)  # in the transcript
        self.drops = FileDrops(self.files, self)
        window.setAcceptDrops(True)
        window.installEventFilter(self.drops)
        box.installEventFilter(self.drops)
        self._asked: dict[int, Attachment | None] = {}  # the counts asked for: their file (None: no file)
        self._raw: dict[int, tuple[Attachment, int]] = {}  # by id() of a file: it and its message's tokens
        self._base: int | None = None  # an empty message's tokens (a file's are its message's past these)
        self.meter = context.meter
        self.search = PassageSearch(client.process, self)
        self.search.done.connect(self._on_searched)
        self.search.failed.connect(show_error)
        self._question = ""
        self._waiting = False  # Enter was pressed while the documents were being counted
        self.box, self.context = box, context
        session.sees_images = lambda: client.models is None or self.sees_images  # not known yet: as they are
        self.answer_documents = AnswerDocuments(session, self)  # answers' footers: passages read, share copied
        self.files.failed.connect(show_error)
        self.files.changed.connect(self._count_files)
        context.attached = lambda: [f if self.sees_images else unseen(f) for f in self.files.files]
        self.files.changed.connect(context.count)
        client.model_loaded.connect(self._on_model_loaded)
        client.prompt_counted.connect(self._on_counted)
        client.prompt_counted.connect(self._send_waiting)  # after the meter's and the chips' counts are shown

    @property
    def sees_images(self) -> bool:
        models = self.client.models
        return models is not None and bool(models.target.projector)

    # ------------------------------------------------------------------ sending
    def send(self, text: str) -> None:
        """Send the typed text with the files (Enter, Send); a file still being read, or an image
        the model cannot see, is said instead and nothing is sent."""
        files = list(self.files.files)
        if self.files.reading:
            self.show_error(f"{self.files.reading[0]} is still being read: send once its chip shows")
            return
        if not self.sees_images and any(f.kind is AttachmentKind.IMAGE for f in files):
            self.show_error(BLIND)
            return
        if self.search.running:
            self.show_error("The documents are being searched: your message goes once they are")
            return
        documents = [f for f in files if f.kind is AttachmentKind.DOCUMENT]
        if documents and (self.context.counting or any(id(f) not in self.chips.tokens for f in documents)):
            self._waiting = True  # sent once counted: whether the documents fit decides how they go
            self.show_error("Counting the documents' tokens: your message goes once they are counted")
            return
        budget, counts = self._room(files)
        if budget is None:
            self.send_now(text, files)
            return
        names = ", ".join(f.name for f in files if f.kind is AttachmentKind.DOCUMENT)
        self.show_error(f"{names} does not fit the context: searching it for the passages your question needs…")
        self._question = text
        self.search.start(files, text, budget, counts)

    def _send_waiting(self, *_counted: object) -> None:
        """A send that waited for the counts: now, if they are all in."""
        if self._waiting and not self.context.counting:
            self._waiting = False
            self.send(self.box.toPlainText())

    def _room(self, files: list[Attachment]) -> tuple[int | None, dict[int, int]]:
        """The tokens the documents may take when they do not fit the context whole (None: they
        fit, or it is not known), and each document's count, by id()."""
        documents = [f for f in files if f.kind is AttachmentKind.DOCUMENT]
        counts = {id(f): self.chips.tokens[id(f)] for f in documents if id(f) in self.chips.tokens}
        size = self.meter.prompt_size
        if not documents or size is None or not size.over or len(counts) < len(documents):
            return None, counts
        others = max(0, size.tokens - sum(counts.values()))  # the typed text, the template, the turns kept
        budget = max(size.limit // 2, size.limit - others) * (100 - SLACK_PERCENT) // 100
        return (budget if sum(counts.values()) > budget else None), counts

    def _on_searched(self, result: SearchResult) -> None:
        self.answer_documents.passages = result.notes  # the answer's footer names them
        if not self.send_now(self._question, result.files):
            self.answer_documents.passages = []

    def send_now(self, text: str, files: list[Attachment]) -> bool:
        """The message sent with ``files`` (the answer being edited saved without them)."""
        editing_answer = any(
            m.id == self.session.editing and m.role == "assistant" for m in self.session.shown.messages
        )
        self.session.attaching = [] if editing_answer else files
        try:
            sent = self.drafts.send(text)
        finally:
            self.session.attaching = []
        if sent:
            self.drafts.sent()
            if not editing_answer:
                self.files.clear()
        return sent

    # ------------------------------------------------------------------ counting
    def _count_files(self) -> None:
        """Ask the engine for each new file's tokens (its message's count less an empty one's)."""
        if self.client.models is None or not self.client.running:
            return
        asked = {id(f) for f in self._asked.values()}
        if self._base is None and id(None) not in asked:
            self._ask(None)
        for attachment in self.files.files:
            if id(attachment) not in self._raw and id(attachment) not in asked:
                self._ask(attachment)

    def _ask(self, attachment: Attachment | None) -> None:
        message = to_message("user", "", [attachment] if attachment is not None else [])
        self._asked[self.client.count_prompt(self.request_for([message], None), keep=True)] = attachment

    @Slot(int, object, str)
    def _on_counted(self, asked: int, size: PromptSize | None, _error: str) -> None:
        if asked not in self._asked:
            return  # the meter's, or from before another model
        attachment = self._asked.pop(asked)
        if size is None:
            return
        if attachment is None:
            self._base = size.tokens
        else:
            self._raw[id(attachment)] = (attachment, size.tokens)
        if self._base is not None:
            for counted, tokens in self._raw.values():
                self.chips.show_tokens(counted, max(0, tokens - self._base))

    @Slot(object)
    def _on_model_loaded(self, _models: LoadedModels) -> None:
        """Another model: other counts, and maybe other eyes."""
        self._base = None
        self._asked.clear()
        self._raw.clear()
        self.chips.tokens.clear()
        self.chips.set_blind(not self.sees_images)
        self._count_files()
