"""The main window: conversations, transcript, input, model bar, live speed panel, status bar.

It wires widgets to the :class:`EngineClient` and the :class:`ChatSession`; it never waits on
the engine (loading and generating happen in the engine's process).
"""

from __future__ import annotations

import gc
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QByteArray, Qt, Slot
from PySide6.QtGui import QAction, QCloseEvent, QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QHBoxLayout,
    QMainWindow,
    QMessageBox,
    QPushButton,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from desktop_app import __version__
from desktop_app.engine.api import (
    DrafterKind,
    GenerateRequest,
    LayerSplit,
    LoadedModels,
    Message,
    ModelOptions,
    SamplingParams,
    SpecMode,
    choose_drafter,
    parse_workers,
)
from desktop_app.engine_process.protocol import AutoPlan, Load
from desktop_app.store import DataDirError, History, Settings
from desktop_app.store.settings import BEST_DRAFTER, NO_DRAFTER
from desktop_app.ui.api_server import ApiServer
from desktop_app.ui.chat_session import ChatSession
from desktop_app.ui.chat_view import ChatView
from desktop_app.ui.conversation_list import ConversationList
from desktop_app.ui.engine_client import EngineClient, GenerationHandle
from desktop_app.ui.message_input import MessageInput
from desktop_app.ui.model_bar import ModelBar
from desktop_app.ui.race_dialog import RaceDialog
from desktop_app.ui.side_panel import SidePanel
from desktop_app.ui.status_bar import CrashBanner, EngineStatusBar

if TYPE_CHECKING:  # imported when first opened: the library checks vocabularies with llama.cpp
    from desktop_app.ui.model_library import ModelLibraryWindow

DEFAULT_LABEL = "SmolLM2-135M (built in)"
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
        self.library: ModelLibraryWindow | None = None
        self.notices: list[str] = []  # what tell() said, in order
        self._save_failed = False
        self.api = ApiServer(self.client, self)

        self.model_bar = ModelBar(DEFAULT_LABEL)
        self.banner = CrashBanner()
        self.conversations = ConversationList(history)
        self.chat_view = ChatView()
        self.input = MessageInput()
        self.send_button = QPushButton("Send")
        self.send_button.setObjectName("sendButton")
        self.send_button.setAccessibleName("Send message")
        self.stop_button = QPushButton("Stop")
        self.stop_button.setObjectName("stopButton")
        self.stop_button.setAccessibleName("Stop the answer")
        self.side = SidePanel()
        self.status = EngineStatusBar(lambda: self.client.pid)
        self.setStatusBar(self.status)
        self._build_layout()
        self.library_action = self._build_menus()
        self.session = ChatSession(self.client, history, self.chat_view, self.request_for, self)
        self._restore_settings()
        self._connect()
        self.conversations.refresh()
        last = settings["last_conversation"]
        self.session.open(last if last and history.conversation(last) else None)
        self._update_buttons()

    # ------------------------------------------------------------------ layout
    def _build_layout(self) -> None:
        centre = QWidget()
        column = QVBoxLayout(centre)
        column.setContentsMargins(0, 0, 0, 0)
        column.addWidget(self.banner)
        column.addWidget(self.chat_view, 1)
        row = QHBoxLayout()
        row.addWidget(self.input, 1)
        buttons = QVBoxLayout()
        buttons.addWidget(self.send_button)
        buttons.addWidget(self.stop_button)
        row.addLayout(buttons)
        column.addLayout(row)
        splitter = QSplitter(Qt.Orientation.Horizontal)
        splitter.addWidget(self.conversations)
        splitter.addWidget(centre)
        splitter.addWidget(self.side)
        splitter.setStretchFactor(1, 1)
        splitter.setSizes([220, 760, 280])
        root = QWidget()
        layout = QVBoxLayout(root)
        layout.setContentsMargins(4, 4, 4, 0)
        layout.addWidget(self.model_bar)
        layout.addWidget(splitter, 1)
        self.setCentralWidget(root)
        self.setTabOrder(self.input, self.send_button)
        self.setTabOrder(self.send_button, self.stop_button)

    def _build_menus(self) -> QAction:
        """File / Models / Help; returns the "Model library…" action."""
        bar = self.menuBar()
        file_menu = bar.addMenu("&File")
        quit_action = file_menu.addAction("&Quit", self.close)
        quit_action.setShortcut(QKeySequence.StandardKey.Quit)
        models_menu = bar.addMenu("&Models")
        library = models_menu.addAction("Model &library…", self.open_library)
        library.setObjectName("openLibraryAction")
        library.setShortcut(QKeySequence("Ctrl+L"))
        library.setStatusTip("Local models, which drafts fit which targets, and the catalog to download")
        workers = models_menu.addAction("&Workers…", self.edit_workers)
        workers.setObjectName("workersAction")
        workers.setStatusTip("Spread the target over other computers running `specchat worker`")
        models_menu.addSeparator()
        self.serve_action = models_menu.addAction(f"&Serve API on localhost:{self.settings['api_port']}")
        self.serve_action.setObjectName("serveApiAction")
        self.serve_action.setCheckable(True)
        self.serve_action.setStatusTip("Serve the loaded models with the OpenAI API, for editors and scripts")
        self.serve_action.toggled.connect(self.set_serving)
        help_menu = bar.addMenu("&Help")
        help_menu.addAction("&About SpecChat", self._show_about)
        return library

    def _show_about(self) -> None:
        QMessageBox.about(self, "About SpecChat",
                          f"SpecChat {__version__}\nChat with local models, made faster by speculative decoding.")

    def _restore_geometry(self) -> None:
        saved = self.settings["window_geometry"]
        if not saved or not self.restoreGeometry(QByteArray.fromBase64(saved.encode("ascii"))):
            self.resize(*DEFAULT_SIZE)

    def _save_geometry(self) -> None:
        self.settings.set("window_geometry", bytes(self.saveGeometry().toBase64().data()).decode("ascii"))

    def _restore_settings(self) -> None:
        s = self.settings
        self._restore_geometry()
        self.model_bar.set_recent(s["recent_files"])
        self.model_bar.show_paths(s["target_path"], s["draft_path"])
        self.model_bar.set_drafter(s["drafter"])
        self.model_bar.target_gpu.setValue(s["n_gpu_layers"])
        self.model_bar.draft_gpu.setValue(s["draft_n_gpu_layers"])
        self.side.set_mode_key(s["spec_mode"])
        self.side.highlight.setChecked(s["highlight_drafts"])
        self.chat_view.set_highlight(s["highlight_drafts"])
        self.side.draft_max.setValue(s["draft_max"])
        self.side.temperature.setValue(s["temperature"])
        self.side.max_tokens.setValue(s["max_tokens"])

    def _connect(self) -> None:
        c = self.client
        c.engine_started.connect(self.status.set_backend)
        self.api.started.connect(lambda url: self.status.show_api(url, lambda: self.api.counter.requests))
        self.api.stopped.connect(lambda: self.status.show_api(None))
        self.api.failed.connect(self.tell)
        c.loading_started.connect(self.model_bar.set_loading)
        c.load_progress.connect(lambda _stage, fraction: self.model_bar.set_load_fraction(fraction))
        c.model_loaded.connect(self._on_model_loaded)
        c.load_failed.connect(self._on_load_failed)
        c.generation_started.connect(self._on_generation_started)
        c.engine_crashed.connect(self._on_crash)
        self.session.busy_changed.connect(self._on_busy_changed)
        self.session.conversation_changed.connect(self._on_conversation_changed)
        self.session.error.connect(self._show_error)
        self.session.store_failed.connect(self.tell)
        self.input.send_requested.connect(self.send)
        self.input.cancel_requested.connect(self.cancel)
        self.send_button.clicked.connect(lambda: self.send(self.input.toPlainText()))
        self.stop_button.clicked.connect(self.cancel)
        QShortcut(QKeySequence(Qt.Key.Key_Escape), self).activated.connect(self.cancel)
        QShortcut(QKeySequence(QKeySequence.StandardKey.New), self).activated.connect(lambda: self.session.open(None))
        self.chat_view.edit_requested.connect(lambda _t: self.edit_last())
        self.conversations.conversation_selected.connect(self.session.open)
        self.conversations.new_requested.connect(lambda: self.session.open(None))
        self.conversations.conversation_deleted.connect(self._on_deleted)
        self.banner.restart_requested.connect(self.restart_engine)
        self.banner.local_requested.connect(self.reload_locally)
        self.model_bar.load_requested.connect(self.load_models)
        self.model_bar.file_opened.connect(self._remember_file)
        self.model_bar.library_requested.connect(self.open_library)
        self.model_bar.drafter_changed.connect(lambda key: self._set("drafter", key))
        self.side.mode.currentTextChanged.connect(lambda _t: self._set("spec_mode", self.side.mode_key()))
        self.side.highlight.toggled.connect(self._set_highlight)
        self.side.draft_max.valueChanged.connect(lambda v: self._set("draft_max", v))
        self.side.temperature.valueChanged.connect(lambda v: self._set("temperature", float(v)))
        self.side.max_tokens.valueChanged.connect(lambda v: self._set("max_tokens", v))
        self.side.race.clicked.connect(self.start_race)

    def _set(self, name: str, value: Any) -> None:
        self.settings.set(name, value)
        self.save_settings()

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
        self.load_models()

    def load_models(self) -> None:
        """Load what the model bar shows, unless exactly that is already loaded (or loading)."""
        s = self.settings
        s.set("target_path", self.model_bar.target_path())
        s.set("draft_path", self.model_bar.draft_path())
        s.set("n_gpu_layers", self.model_bar.target_gpu.value())
        s.set("draft_n_gpu_layers", self.model_bar.draft_gpu.value())
        s.set("drafter", self.model_bar.drafter_choice())
        self.save_settings()
        threads = s["n_threads"] or None  # None: the engine measures which count is fastest
        command = Load(
            target=s["target_path"],  # "" is the default model; the engine process finds it
            target_options=ModelOptions(n_gpu_layers=s["n_gpu_layers"], n_ctx=s["n_ctx"], n_threads=threads,
                                        workers=parse_workers(s["workers"]), split=LayerSplit.parse(s["worker_split"])),
            draft=s["draft_path"] or None,
            draft_options=ModelOptions(n_gpu_layers=s["draft_n_gpu_layers"], n_ctx=s["n_ctx"], n_threads=threads),
            plan=AutoPlan(self._requested_drafter(), s["draft_max"]),
            history=str(self.history.path),  # what the n-gram cache learns from
        )
        if command == self.client.last_load and self.client.running:
            return  # e.g. a GPU-layers box lost focus without a change
        self.model_bar.set_loading("Loading…")
        self.client.load(command)
        self._update_buttons()

    def _requested_drafter(self) -> DrafterKind | None:
        choice = self.settings["drafter"]
        return None if choice in (NO_DRAFTER, BEST_DRAFTER) else DrafterKind(choice)

    def drafter(self) -> DrafterKind:
        """The drafter answers use now: the chosen one when the loaded models offer it."""
        available = self.client.models.drafters if self.client.models is not None else ()
        return choose_drafter(self._requested_drafter(), available)

    def request_for(self, messages: list[Message]) -> GenerateRequest:
        """The request for an answer to ``messages`` from the current settings (drafter
        "none" means speculation off; a drafter the loaded models lack falls back, and the
        footer says which one drafted)."""
        s = self.settings
        spec = SpecMode.OFF if s["drafter"] == NO_DRAFTER else SpecMode(s["spec_mode"])
        return GenerateRequest(
            messages=messages, max_tokens=s["max_tokens"], spec=spec, draft_max=s["draft_max"],
            sampling=SamplingParams(temperature=s["temperature"], seed=s["seed"]),
            drafter=None if spec is SpecMode.OFF else self.drafter(),
        )

    @Slot(object)
    def _on_generation_started(self, handle: GenerationHandle) -> None:
        self.side.gauge.set_streaming(True)
        handle.stats_updated.connect(self.side.show_live)
        handle.stats_updated.connect(lambda stats: self.status.set_threads(stats.threads))
        handle.finished.connect(lambda done: self.side.show_final(done.stats))
        handle.finished.connect(lambda done: self.status.set_threads(done.stats.threads))

    @Slot(object)
    def _on_model_loaded(self, loaded: LoadedModels) -> None:
        note = f"Ready: {loaded.target.name}"
        if loaded.speculation_refusal:
            note += " (speculation unavailable)"
            self.model_bar.status.setToolTip(loaded.speculation_refusal)
        else:
            self.model_bar.status.setToolTip(f"Drafting available: {loaded.drafting_note}")
        self.model_bar.set_idle(note)
        if loaded.draft_error:
            self.model_bar.set_compatibility(False, loaded.draft_error)
        elif loaded.draft is not None:
            self.model_bar.set_compatibility(True, loaded.draft_compatibility or "")
        else:
            self.model_bar.set_compatibility(None)
        self.status.set_models(loaded)
        self._update_buttons()

    @Slot(str)
    def _on_load_failed(self, message: str) -> None:
        self.model_bar.set_idle("Load failed")
        self._show_error(message)
        self._update_buttons()

    @Slot(str)
    def _on_crash(self, reason: str) -> None:
        last = self.client.last_load
        self.banner.show_reason(reason, offer_local=last is not None and bool(last.target_options.workers))
        self.side.gauge.set_streaming(False)
        self.model_bar.set_idle("Engine stopped")
        self.status.set_models(None)
        self._update_buttons()

    def restart_engine(self) -> None:
        self.banner.hide()
        self.client.restart()
        self.model_bar.set_loading("Restarting the engine…")
        self._update_buttons()

    def reload_locally(self) -> None:
        """After a lost worker: the same models with every layer on this computer (the
        workers setting is kept for the next load)."""
        self.banner.hide()
        last = self.client.last_load
        self.client.restart(last.locally() if last is not None else None)
        self.model_bar.set_loading("Loading on this computer…")
        self._update_buttons()

    def edit_workers(self) -> None:
        """Models → Workers…: change the workers and reload when they changed."""
        from desktop_app.ui.workers_dialog import WorkersDialog

        dialog = WorkersDialog(self.settings["workers"], self.settings["worker_split"], self)
        if dialog.exec() != WorkersDialog.DialogCode.Accepted:
            return
        self.settings.set("workers", dialog.workers.text().strip())
        self.settings.set("worker_split", dialog.split.text().strip())
        self.save_settings()
        self.load_models()

    def _show_error(self, message: str) -> None:
        self.status.showMessage(message, 15000)

    # ------------------------------------------------------------------ model library
    def open_library(self) -> ModelLibraryWindow:
        """Show the model library (one non-modal window), rescanning the models folder."""
        if self.library is None:
            # Not at start-up: the library pulls in llama.cpp (vocabulary checks), which the window
            # process otherwise never loads (tests/ui/test_engine_process.py).
            from desktop_app.ui.model_library import ModelLibraryWindow

            self.library = ModelLibraryWindow(parent=self)
            self.library.setWindowFlag(Qt.WindowType.Window)  # its own window, closed with this one
            self.library.target_chosen.connect(lambda path: self._use_library_file(path, as_draft=False))
            self.library.draft_chosen.connect(lambda path: self._use_library_file(path, as_draft=True))
        self.library.refresh()
        self.library.show()
        self.library.raise_()
        self.library.activateWindow()
        return self.library

    def _use_library_file(self, path: str, as_draft: bool) -> None:
        if not self.model_bar.isEnabled():
            self._show_error("Stop the answer before switching models")
            return
        self.model_bar.use_file(path, as_draft=as_draft)

    # ------------------------------------------------------------------ chatting
    def send(self, text: str) -> None:
        if not self.client.running:
            self._show_error("The engine is not running: restart it first")
            return
        if self.race_dialog is not None and self.race_dialog.running:
            return
        if self.session.send(text):
            self.input.clear()

    def cancel(self) -> None:
        if self.race_dialog is not None and self.race_dialog.running:
            self.race_dialog.stop()
        self.session.cancel()

    def edit_last(self) -> None:
        text = self.session.take_last_user_message()
        if text is not None:
            self.client.history_changed(deleted=True)
            self.input.setPlainText(text)
            self.input.setFocus()

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
        self.race_dialog.show()
        self.race_dialog.start(self.request_for(messages), self.drafter())
        self._update_buttons()

    def _update_buttons(self) -> None:
        racing = self.race_dialog is not None and self.race_dialog.running
        busy = self.session.busy or racing
        alive = self.client.running
        self.send_button.setEnabled(alive and not busy)
        self.stop_button.setEnabled(busy)
        self.side.race.setEnabled(alive and not busy)
        self.model_bar.setEnabled(not busy)

    def _set_highlight(self, on: bool) -> None:
        self._set("highlight_drafts", on)
        self.chat_view.set_highlight(on)

    def _remember_file(self, path: str) -> None:
        self.settings.add_recent_file(path)
        self.save_settings()
        self.model_bar.set_recent(self.settings["recent_files"])

    def _on_conversation_changed(self, conversation_id: int) -> None:
        self._set("last_conversation", conversation_id)
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
        self.session.cancel()
        if self.library is not None:
            self.library.close()
        self._save_geometry()
        self.save_settings()
        self.api.stop()
        self.client.shutdown()
        super().closeEvent(event)
