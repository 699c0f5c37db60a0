"""Documents too large for the context, searched before the message is sent: each is cut into
passages that the loaded model's embeddings rank against the question, and the best that fit the
room left are sent in its place (:func:`desktop_app.documents.passages.choose_passages`), with a
note naming what was read for the answer's footer.

The search runs on a thread of its own (embedding a long document takes seconds); it asks the
engine process for the embeddings and waits for them there, never in the GUI thread. Tokens are
counted at the document's own rate (its tokens, as the engine counted them for its chip, per
character), so choosing passages costs no round trips.
"""

from __future__ import annotations

import math
import queue
import threading
from collections.abc import Sequence
from dataclasses import dataclass, replace

from PySide6.QtCore import QObject, Signal

from desktop_app.documents.attachment import Attachment, AttachmentKind
from desktop_app.documents.passages import Embed, choose_passages
from desktop_app.engine_process.client import EngineLost, EngineProcess
from desktop_app.engine_process.protocol import Embedded
from desktop_app.ui.engine.thread_relay import hold

EMBED_TIMEOUT_S = 600.0  # one embedding request (a long document on a slow machine)


@dataclass(frozen=True)
class SearchResult:
    """The files to send (documents that did not fit replaced by their passages) and the notes
    naming what was read of each."""

    files: list[Attachment]
    notes: list[str]


def embedder(process: EngineProcess) -> Embed:
    """``embed(texts) -> vectors`` through the engine process, waiting on the calling thread."""

    def embed(texts: Sequence[str]) -> list[list[float]]:
        answers: queue.Queue[object] = queue.Queue()
        process.embed(list(texts), answers.put)
        try:
            event = answers.get(timeout=EMBED_TIMEOUT_S)
        except queue.Empty:
            raise RuntimeError("the engine did not answer the embedding in time") from None
        if isinstance(event, Embedded) and event.result is not None:
            return event.result.vectors
        if isinstance(event, EngineLost):
            raise RuntimeError(f"the engine stopped: {event.reason}")
        raise RuntimeError(getattr(event, "error", "") or "the engine could not embed the document")

    return embed


def search_documents(
    process: EngineProcess, files: Sequence[Attachment], question: str, budget: int, tokens: dict[int, int]
) -> SearchResult:
    """``files`` with each document of more than its share of ``budget`` tokens replaced by its
    passages that fit it (``tokens``: each document's count, by id()); blocking."""
    documents = [f for f in files if f.kind is AttachmentKind.DOCUMENT]
    total = sum(tokens.get(id(d), 0) for d in documents) or 1
    embed = embedder(process)
    out: list[Attachment] = []
    notes: list[str] = []
    for f in files:
        counted = tokens.get(id(f), 0)
        share = max(1, budget * counted // total)
        if f.kind is not AttachmentKind.DOCUMENT or counted <= share:
            out.append(f)
            continue
        rate = counted / max(1, len(f.text))

        def count(text: str, rate: float = rate) -> int:
            return math.ceil(len(text) * rate)

        chosen = choose_passages(f.text, question, share, embed, count, name=f.name)
        out.append(replace(f, text=chosen.text))
        if chosen.note:
            notes.append(chosen.note)
    return SearchResult(out, notes)


class _SearchRelay(QObject):
    done = Signal(object)  # SearchResult
    failed = Signal(str)


class PassageSearch(QObject):
    """One search at a time, on its own thread.

    Signals:
        done(SearchResult): the files to send and the notes.
        failed(str): why the documents could not be searched.
    """

    done = Signal(object)
    failed = Signal(str)

    def __init__(self, process: EngineProcess, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.process = process
        self.running = False

    def start(self, files: Sequence[Attachment], question: str, budget: int, tokens: dict[int, int]) -> None:
        self.running = True
        relay = _SearchRelay()
        relay.done.connect(self._on_done)
        relay.failed.connect(self._on_failed)
        files, tokens = list(files), dict(tokens)

        def target() -> None:
            try:
                relay.done.emit(search_documents(self.process, files, question, budget, tokens))
            except Exception as exc:  # noqa: BLE001 - said to the user; the message stays unsent
                relay.failed.emit(f"The documents could not be searched: {exc}")
            finally:
                relay.deleteLater()

        thread = threading.Thread(target=target, name="passage search", daemon=True)
        hold(relay, thread)
        thread.start()

    def _on_done(self, result: SearchResult) -> None:
        self.running = False
        self.done.emit(result)

    def _on_failed(self, message: str) -> None:
        self.running = False
        self.failed.emit(message)
