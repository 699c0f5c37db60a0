"""How the next answer is made: speculation mode, drafter, draft length, sampling, length, system prompt.

The side panel (its one speculation control through
:class:`~desktop_app.ui.speed.speculation_choice.SpeculationChoice`) and the Preferences window edit
these settings; each change is saved at once, and :meth:`AnswerSettings.request_for` turns them
into an answer's request.
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
from desktop_app.store.presets import AnswerPreset
from desktop_app.store.settings import BEST_DRAFTER, NO_DRAFTER
from desktop_app.ui.engine.engine_client import EngineClient
from desktop_app.ui.speed.side_panel import SidePanel
from desktop_app.ui.speed.speculation_choice import SpeculationChoice
from desktop_app.ui.transcript.chat_view import ChatView


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
        chat_view: ChatView,
        save: Callable[[], None],
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self.settings = settings
        self._client = client
        self._chat_view = chat_view
        self._save = save
        self._side = side
        self.think: Callable[[], bool | None] = lambda: None  # the Think switch's choice (ui/composer/think_switch.py)
        # the open conversation's own settings, None: these (ui/composer/conversation_settings.py)
        self.own: Callable[[], AnswerPreset | None] = lambda: None
        self.speculation = SpeculationChoice(settings, client, side.mode, side.always, side.choice_note, save, self)
        self.show_settings()  # before the widgets are connected: restoring them saves nothing
        side.highlight.toggled.connect(self._set_highlight)
        side.draft_max.valueChanged.connect(lambda v: self._set("draft_max", v))
        side.temperature.valueChanged.connect(lambda v: self._set("temperature", float(v)))
        side.max_tokens.valueChanged.connect(lambda v: self._set("max_tokens", v))

    def show_settings(self) -> None:
        """Show the saved values in the side panel (at start, and after the Preferences window
        changed them)."""
        s, side = self.settings, self._side
        self.speculation.reload()
        side.highlight.setChecked(s["highlight_drafts"])
        self._chat_view.set_highlight(s["highlight_drafts"])
        side.draft_max.setValue(s["draft_max"])
        side.temperature.setValue(s["temperature"])
        side.max_tokens.setValue(s["max_tokens"])

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

    def request_for(self, messages: list[Message], system_prompt: str | None = None) -> GenerateRequest:
        """The request for an answer to ``messages`` from the current settings (a drafter the
        loaded models lack cannot be chosen; one that went with a reload is named in the side
        panel, and the best available drafts). ``system_prompt`` is the conversation's own
        (None: the default one); when it is not empty the messages start with it. The open
        conversation's own settings (``own``), if any, replace sampling, length and speculation."""
        s, own = self.settings, self.own()
        spec = SpecMode.OFF if s["drafter"] == NO_DRAFTER else SpecMode(s["spec_mode"])
        spec = spec if own is None else own.spec_mode
        prompt = s["system_prompt"] if system_prompt is None else system_prompt
        if prompt.strip():
            messages = [Message(role="system", content=prompt), *messages]
        return GenerateRequest(
            messages=messages,
            max_tokens=s["max_tokens"] if own is None else own.max_tokens,
            spec=spec,
            draft_max=s["draft_max"],
            sampling=SamplingParams(
                temperature=s["temperature"] if own is None else own.temperature,
                top_k=s["top_k"] if own is None else own.top_k,
                top_p=s["top_p"] if own is None else own.top_p,
                min_p=s["min_p"],
                repeat_penalty=s["repeat_penalty"],
                seed=None if s["random_seed"] else s["seed"],
            ),
            drafter=None if spec is SpecMode.OFF else self.drafter(),
            think=self.think(),
            overflow=OverflowPolicy(s["context_overflow"]),
        )
