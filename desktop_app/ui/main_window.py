"""The main window: conversations, transcript, input, model bar, live speed panel, status bar.

It lays the widgets out and wires them to the :class:`EngineClient` and the :class:`ChatSession`;
its parts do the rest: :class:`ModelLoader` (which models to load), :class:`EngineRecovery` (the
engine process died), :class:`AnswerSettings` (how answers are made) and :class:`WindowMenus`.
It never waits on the engine (loading and generating happen in the engine's process).
"""

from __future__ import annotations

import gc
from typing import TYPE_CHECKING

from PySide6.QtGui import QCloseEvent
from PySide6.QtWidgets import QMainWindow, QWidget

from desktop_app.engine.api import DrafterKind
from desktop_app.engine.reasoning import THINK_TAGS
from desktop_app.store import DataDirError, History, Settings
from desktop_app.ui.composer.attachment_send import AttachmentComposer
from desktop_app.ui.composer.conversation_settings import ConversationSettingsButton
from desktop_app.ui.composer.input_drafts import EditingBar, InputDrafts
from desktop_app.ui.composer.message_input import MessageInput
from desktop_app.ui.composer.system_prompt import SystemPromptButton, conversation_prompt
from desktop_app.ui.composer.think_switch import ThinkSwitch
from desktop_app.ui.composer.wait_hint import WaitHint
from desktop_app.ui.context.context_meter import ContextMeter
from desktop_app.ui.context.context_watch import ContextWatch
from desktop_app.ui.conversations.chat_session import ChatSession
from desktop_app.ui.conversations.conversation_list import ConversationList
from desktop_app.ui.conversations.conversation_transfer import ConversationTransfer
from desktop_app.ui.engine.api_server import ApiServer
from desktop_app.ui.engine.engine_client import EngineClient
from desktop_app.ui.engine.engine_recovery import EngineRecovery
from desktop_app.ui.models.load_banner import LoadBanner
from desktop_app.ui.models.model_bar import ModelBar
from desktop_app.ui.models.model_loading import ModelLoader
from desktop_app.ui.preferences.changes import Preferences
from desktop_app.ui.speed.answer_settings import AnswerSettings
from desktop_app.ui.speed.race_dialog import RaceDialog, keep_race
from desktop_app.ui.speed.side_panel import SidePanel
from desktop_app.ui.speed.speed_feed import ChatSpeedFeed
from desktop_app.ui.tools.mcp_tools import McpTools, ToolChoiceBox
from desktop_app.ui.tools.mcp_turns import ToolTurns
from desktop_app.ui.transcript.chat_keys import ChatKeys
from desktop_app.ui.transcript.chat_view import ChatView
from desktop_app.ui.transcript.conversation_find import ConversationFind
from desktop_app.ui.widgets.named_button import named_button
from desktop_app.ui.window.focus import FocusKeeper
from desktop_app.ui.window.status_bar import CrashBanner, EngineStatusBar
from desktop_app.ui.window.welcome import FirstRunWelcome
from desktop_app.ui.window.window_geometry import ScreenFit
from desktop_app.ui.window.window_layout import SidePanelFold, lay_out
from desktop_app.ui.window.window_menus import WindowMenus

if TYPE_CHECKING:  # imported when first opened: the library checks vocabularies with llama.cpp
    from desktop_app.ui.models.model_library import ModelLibraryWindow

DEFAULT_LABEL = "Built-in demo (SmolLM2-135M)"
DEFAULT_SIZE = (1280, 800)


class MainWindow(QMainWindow):
    """SpecChat's window. ``start()`` starts the engine and loads the last (or default) models."""

    def __init__(self, settings: Settings, history: History, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.settings = settings
        self.history = history
        self.setWindowTitle("SpecChat")
        self.client = EngineClient(self)
        self.race_dialog: RaceDialog | None = None
        self.notices: list[str] = []  # what tell() said, in order
        self._save_failed = False
        self.api = ApiServer(self.client, self)

        self.model_bar = ModelBar(DEFAULT_LABEL)
        self.banner = CrashBanner()
        self.load_banner = LoadBanner()
        self.conversations = ConversationList(history)
        self.input = MessageInput()
        self.chat_view = ChatView()
        self.find_in_chat = ConversationFind(self, self.chat_view, self.input)  # Ctrl+F: its bar over the transcript
        self.think = ThinkSwitch(history)
        self.editing_bar = EditingBar()
        self.prompt_button = SystemPromptButton(settings, history, self.input)
        self.meter = ContextMeter()
        self.mcp = McpTools(settings, self.client, self.save_settings, self)  # the MCP servers' tools
        self.tool_choice = ToolChoiceBox(self.mcp)
        self.settings_button = ConversationSettingsButton(settings, history, self.prompt_button, self.tell)
        self.send_button = named_button("Send", "sendButton", "Send message")
        self.stop_button = named_button("Stop", "stopButton", "Stop the answer")
        self.wait_hint = WaitHint(self.stop_button.isEnabled)  # Enter while an answer runs: the text stays
        self.side = SidePanel()
        self.status = EngineStatusBar(lambda: self.client.pid)
        self.setStatusBar(self.status)
        self.side_fold = SidePanelFold(self, self.side, settings, self.save_settings)
        lay_out(
            self, self.model_bar, self.side_fold.button, [self.banner, self.load_banner, self.find_in_chat.bar], self.chat_view,
            [self.editing_bar, self.wait_hint], self.input, [self.think, self.prompt_button, self.settings_button, self.tool_choice, self.send_button, self.stop_button],
            [self.meter], self.conversations, self.side_fold.area,
        )  # fmt: skip
        self.answers = AnswerSettings(settings, self.client, self.side, self.chat_view, self.save_settings, self)
        offer = self.mcp.offer
        self.mcp.notice.connect(self._show_error)  # an MCP tool whose schema no grammar takes, named
        self.session = ChatSession(
            self.client, history, self.chat_view, lambda m, p: offer(self.answers.request_for(m, p)), self
        )
        self.tool_turns = ToolTurns(self.session, self.mcp, self)
        self.think.follow(self.client, self.session)
        self.answers.think = self.think.choice
        self.settings_button.follow(self.session, self.answers)  # the open conversation's own settings
        self.drafts = InputDrafts(self.session, self.input, self.editing_bar, history, self)
        self.loader = ModelLoader(
            self, settings, history, self.client, self.model_bar, self.status, self.load_banner, self.save_settings,
            self._show_error,
        )  # fmt: skip
        self.speed_feed = ChatSpeedFeed(self.client, self.session, self.side, self.status, self)
        self.recovery = EngineRecovery(self.client, self.banner, self.model_bar, self.status, self)
        self.context = ContextWatch(  # the context meter, the transcript's note, prompt progress
            self.meter, self.chat_view, self.input, self.session, self.client, settings, history,
            self.answers.request_for, self.loader.load_models, self.save_settings, self,
        )  # fmt: skip
        self.attach = AttachmentComposer(  # files: chips, paperclip, drops, pastes, counts; sent with the message
            self, self.input, self.session, self.drafts, self.client, self.context, self.answers.request_for, self._show_error
        )  # fmt: skip
        menus = self.menus = WindowMenus(self, settings["api_port"], self.api)
        self.library_action, self.serve_action = menus.library, menus.serve
        self.library_action.triggered.connect(lambda: self.loader.open_library())
        menus.workers.triggered.connect(lambda: self.loader.edit_workers())
        self.serve_action.toggled.connect(self.set_serving)
        self.transfer = ConversationTransfer(
            self, history, self.session, self.conversations, self.status, menus.file_menu
        )
        self.welcome = FirstRunWelcome(
            self.chat_view, self.input, self.client, self.session, settings, self.loader.open_library,
            self.save_settings, parent=self,
        )  # fmt: skip
        self.preferences = Preferences(
            self, settings, self.chat_view, self.input, self.mcp, self.model_bar, self.serve_action,
            self.answers.show_settings, self.save_settings, self.tell, self.loader.load_models,
        )  # fmt: skip
        menus.preferences.triggered.connect(lambda: self.preferences.open())
        self.screen_fit = ScreenFit(self, DEFAULT_SIZE)
        self.screen_fit.restore(settings["window_geometry"])
        self._connect()
        self.conversations.refresh()
        last = settings["last_conversation"]
        self.session.open(last if last and history.conversation(last) else None)
        self._update_buttons()
        self.focus = FocusKeeper(self, self.input)  # after every widget is built

    # ------------------------------------------------------------------ layout
    def _save_geometry(self) -> None:
        self.settings.set("window_geometry", bytes(self.saveGeometry().toBase64().data()).decode("ascii"))

    def _connect(self) -> None:
        c = self.client
        c.engine_started.connect(self.status.set_backend)
        # Answers stored from a thinking model keep their fold under a model without reasoning markers.
        c.model_loaded.connect(lambda m: self.chat_view.set_reasoning_format(m.target.reasoning_format or THINK_TAGS))
        self.api.started.connect(lambda url: self.status.show_api(url, lambda: self.api.counter.requests))
        self.api.stopped.connect(lambda: self.status.show_api(None))
        self.api.failed.connect(self.tell)
        self.loader.state_changed.connect(self._update_buttons)
        self.recovery.state_changed.connect(self._update_buttons)
        self.session.busy_changed.connect(self._on_busy_changed)
        self.session.conversation_changed.connect(self._on_conversation_changed)
        self.session.conversation_changed.connect(self.prompt_button.set_conversation)
        self.session.error.connect(self._show_error)
        self.session.store_failed.connect(self.tell)
        self.input.send_requested.connect(self.send)
        self.input.cancel_requested.connect(self.cancel)
        self.send_button.clicked.connect(lambda: self.send(self.input.toPlainText()))
        self.stop_button.clicked.connect(self.cancel)
        ChatKeys(self, self.chat_view, self.cancel, lambda: self.session.open(None))  # Esc, Ctrl+N, the last answer's
        self.chat_view.edit_requested.connect(lambda _t: self.drafts.edit_last())
        self.conversations.conversation_selected.connect(self.session.open)
        self.conversations.new_requested.connect(lambda: self.session.open(None))
        self.conversations.conversation_deleted.connect(self._on_deleted)
        self.side.race.clicked.connect(self.start_race)

    def save_settings(self) -> None:
        """Save; a folder that cannot be written is said once, then the app goes on without saving."""
        try:
            self.settings.save()
        except DataDirError as exc:
            if not self._save_failed:
                self._save_failed = True
                self.tell(f"{exc}: changes are kept until you quit")

    def set_serving(self, on: bool) -> None:
        """Switch the local OpenAI-compatible API on or off (the status bar shows its address)."""
        if on and not self.api.running:
            if not self.api.start(self.settings["api_port"], self.settings["api_key"] or None):
                self.serve_action.setChecked(False)
        elif not on and self.api.running:
            self.api.stop()

    def tell(self, message: str) -> None:
        """Something the user must read once (a settings file set aside, a failed save)."""
        self.status.showMessage(message, 30_000)
        self.notices.append(message)

    # ------------------------------------------------------------------ engine
    def start(self) -> None:
        """Start the engine process and load the chosen models (the default model on first run)."""
        if self.settings.problem:
            self.tell(self.settings.problem)  # a settings file set aside: said once, at start
        # Everything built so far lives as long as the window: out of the cyclic collector's
        # sight, a full collection while an answer streams scans only what came since (a full
        # scan of Qt's and the app's start-up objects paused the event loop for 50-130 ms).
        gc.freeze()
        self.client.start()
        self.loader.load_models()
        self.mcp.refresh()  # the MCP servers the user added, if any

    def drafter(self) -> DrafterKind:
        """The drafter answers use now: the chosen one when the loaded models offer it."""
        return self.answers.drafter()

    @property
    def library(self) -> ModelLibraryWindow | None:
        """The model library, once opened (Models → Model library…, or from a model picker)."""
        return self.loader.library

    def restart_engine(self) -> None:
        """A fresh engine process with the last models loaded (the crash banner's Restart)."""
        self.recovery.restart_engine()

    def _show_error(self, message: str) -> None:
        self.status.showMessage(message, 15000)

    # ------------------------------------------------------------------ chatting
    def send(self, text: str) -> None:
        if not self.client.running:
            self._show_error("The engine is not running: restart it first")
            return
        if self.wait_hint.held():  # an answer (or a race) runs: nothing is sent, the text stays
            return
        if not self._model_ready():
            self._show_error("No model is loaded: choose one first")
            return
        self.attach.send(text)  # your message with its files, or the answer being edited saved

    def cancel(self) -> None:
        if self.race_dialog is not None and self.race_dialog.running:
            self.race_dialog.stop()
        self.session.cancel()

    def start_race(self) -> None:
        messages = self.session.engine_messages()
        while messages and messages[-1]["role"] == "assistant":
            messages.pop()
        if not messages or self.session.busy or not self.client.running:
            self._show_error("Send a message first: the race reruns the last prompt")
            return
        if self.race_dialog is None:
            self.race_dialog = RaceDialog(self.client, self)
            self.race_dialog.race_finished.connect(lambda _r: self._update_buttons())
            self.race_dialog.race_failed.connect(lambda _m: self._update_buttons())
            self.race_dialog.race_finished.connect(self.side.show_race)
            self.race_dialog.race_finished.connect(
                lambda r: keep_race(self.history, self.session.conversation_id, self.chat_view, r)
            )
            self.race_dialog.finished.connect(lambda _r: self.input.setFocus())
        self.input.setFocus()  # not the race button, disabled while racing (focus would move on to a setting)
        self.race_dialog.show()
        prompt = conversation_prompt(self.history, self.session.conversation_id)
        self.race_dialog.start(self.answers.request_for(messages, prompt), self.drafter())
        self._update_buttons()

    def _update_buttons(self) -> None:
        racing = self.race_dialog is not None and self.race_dialog.running
        busy = self.session.busy or racing
        alive = self.client.running and self._model_ready()
        self.send_button.setEnabled(alive and not busy)
        self.stop_button.setEnabled(busy)
        self.side.race.setEnabled(alive and not busy)
        self.model_bar.setEnabled(not busy)

    def _model_ready(self) -> bool:
        """A model is loaded, or loading (a message sent meanwhile waits for it)."""
        return self.client.models is not None or self.client.loading

    def _on_conversation_changed(self, conversation_id: int) -> None:
        self.settings.set("last_conversation", conversation_id)
        self.save_settings()
        self.conversations.set_current(conversation_id or None)

    def _on_deleted(self, conversation_id: int) -> None:
        if self.session.conversation_id == conversation_id:
            self.session.open(None)  # stops its answer first: the engine forgets after it ends
        self.client.history_changed(deleted=True)

    def _on_busy_changed(self, busy: bool) -> None:
        if not busy:
            self.client.history_changed()  # the answer was saved: the n-gram cache learns it
        self._update_buttons()

    def closeEvent(self, event: QCloseEvent) -> None:  # noqa: N802 - Qt API
        self.session.save_now()
        self.drafts.save()
        self.session.cancel()
        if self.loader.library is not None:
            self.loader.library.close()
        self._save_geometry()
        self.save_settings()
        self.api.stop()
        self.mcp.close()
        self.client.shutdown()
        super().closeEvent(event)
