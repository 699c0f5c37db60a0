"""How the next answer is made: speculation mode, drafter, draft length, temperature, length.

The side panel and the model bar's drafter box edit these settings; each change is saved at
once, and :meth:`AnswerSettings.request_for` turns them into an answer's request.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject

from desktop_app.engine.api import (
    DrafterKind,
    GenerateRequest,
    Message,
    OverflowPolicy,
    SamplingParams,
    SpecMode,
    choose_drafter,
)
from desktop_app.store import Settings
from desktop_app.store.settings import BEST_DRAFTER, NO_DRAFTER
from desktop_app.ui.chat_view import ChatView
from desktop_app.ui.engine_client import EngineClient
from desktop_app.ui.model_bar import ModelBar
from desktop_app.ui.side_panel import SidePanel


def requested_drafter(settings: Settings) -> DrafterKind | None:
    """The drafter the user chose; None for "best available" and for "no speculation"."""
    choice = settings["drafter"]
    return None if choice in (NO_DRAFTER, BEST_DRAFTER) else DrafterKind(choice)


class AnswerSettings(QObject):
    """Shows the answer settings in the side panel and the model bar's drafter box, and saves
    every change made there (through ``save``)."""

    def __init__(
        self,
        settings: Settings,
        client: EngineClient,
        side: SidePanel,
        model_bar: ModelBar,
        chat_view: ChatView,
        save: Callable[[], None],
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self.settings = settings
        self._client = client
        self._chat_view = chat_view
        self._save = save
        s = settings
        # shown before the widgets are connected: restoring them saves nothing
        model_bar.set_drafter(s["drafter"])
        side.set_mode_key(s["spec_mode"])
        side.highlight.setChecked(s["highlight_drafts"])
        chat_view.set_highlight(s["highlight_drafts"])
        side.draft_max.setValue(s["draft_max"])
        side.temperature.setValue(s["temperature"])
        side.max_tokens.setValue(s["max_tokens"])
        model_bar.drafter_changed.connect(lambda key: self._set("drafter", key))
        side.mode.currentTextChanged.connect(lambda _t: self._set("spec_mode", side.mode_key()))
        side.highlight.toggled.connect(self._set_highlight)
        side.draft_max.valueChanged.connect(lambda v: self._set("draft_max", v))
        side.temperature.valueChanged.connect(lambda v: self._set("temperature", float(v)))
        side.max_tokens.valueChanged.connect(lambda v: self._set("max_tokens", v))

    def _set(self, name: str, value: Any) -> None:
        self.settings.set(name, value)
        self._save()

    def _set_highlight(self, on: bool) -> None:
        self._set("highlight_drafts", on)
        self._chat_view.set_highlight(on)

    def drafter(self) -> DrafterKind:
        """The drafter answers use now: the chosen one when the loaded models offer it."""
        available = self._client.models.drafters if self._client.models is not None else ()
        return choose_drafter(requested_drafter(self.settings), available)

    def request_for(self, messages: list[Message]) -> GenerateRequest:
        """The request for an answer to ``messages`` from the current settings (drafter
        "none" means speculation off; a drafter the loaded models lack falls back, and the
        footer says which one drafted)."""
        s = self.settings
        spec = SpecMode.OFF if s["drafter"] == NO_DRAFTER else SpecMode(s["spec_mode"])
        return GenerateRequest(
            messages=messages,
            max_tokens=s["max_tokens"],
            spec=spec,
            draft_max=s["draft_max"],
            sampling=SamplingParams(temperature=s["temperature"], seed=s["seed"]),
            drafter=None if spec is SpecMode.OFF else self.drafter(),
            overflow=OverflowPolicy(s["context_overflow"]),
        )
