"""Which models to load: what the model bar shows (paths, GPU layers, recent files, a file chosen
in the model library), the workers that hold part of the target, and what the bar says while and
after they load. After a failed load the bar, the status bar and the saved settings follow what
the engine really has loaded, a file that is not a model is forgotten, and a banner says why."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Qt, Signal, Slot
from PySide6.QtWidgets import QWidget

from desktop_app.engine.api import LayerSplit, LoadedModels, ModelOptions, parse_workers
from desktop_app.engine_process.protocol import AutoPlan, Load, LoadFailed, Ready
from desktop_app.store import History, Settings
from desktop_app.ui.engine.engine_client import EngineClient
from desktop_app.ui.models.load_banner import LoadBanner
from desktop_app.ui.models.model_bar import ModelBar
from desktop_app.ui.speed.answer_settings import requested_drafter
from desktop_app.ui.widgets.plain_text import plain_tip
from desktop_app.ui.window.status_bar import EngineStatusBar

if TYPE_CHECKING:  # imported when first opened: the library checks vocabularies with llama.cpp
    from desktop_app.ui.models.model_library import ModelLibraryWindow


class ModelLoader(QObject):
    """Loads what the model bar shows, saving it as the models to load next time. Its dialogs
    and the model library are children of ``window``.

    Signals:
        state_changed(): a load was asked for, ended or failed (what the window enables may change).
    """

    state_changed = Signal()

    def __init__(
        self,
        window: QWidget,
        settings: Settings,
        history: History,
        client: EngineClient,
        model_bar: ModelBar,
        status: EngineStatusBar,
        banner: LoadBanner,
        save: Callable[[], None],
        show_error: Callable[[str], None],
    ) -> None:
        super().__init__(window)
        self._window = window
        self.settings = settings
        self.library: ModelLibraryWindow | None = None
        self._history = history
        self._client = client
        self._bar = model_bar
        self._status = status
        self._banner = banner
        self._save = save
        self._show_error = show_error
        self._engine: Ready | None = None  # the engine process's last Ready: its backend
        s = settings
        model_bar.set_recent(s["recent_files"])
        model_bar.show_paths(s["target_path"], s["draft_path"])
        model_bar.target_gpu.setValue(s["n_gpu_layers"])
        model_bar.draft_gpu.setValue(s["draft_n_gpu_layers"])
        client.engine_started.connect(self._show_gpu)
        client.loading_started.connect(model_bar.set_loading)
        client.load_progress.connect(lambda _stage, fraction: model_bar.set_load_fraction(fraction))
        client.model_loaded.connect(self._on_model_loaded)
        client.load_failed.connect(self._on_load_failed)
        model_bar.load_requested.connect(self.load_models)
        model_bar.file_opened.connect(self._remember_file)
        model_bar.library_requested.connect(self.open_library)
        banner.choose_requested.connect(self.open_library)

    def _show_gpu(self, info: Ready | None = None) -> None:
        """The model bar's GPU layers for the engine's backend (``info``, else the running
        engine's: its Ready says "CPU" when it has no GPU)."""
        self._engine = info = info or self._engine
        if info is not None:
            has_gpu = info.backend_name.upper() != "CPU"
            self._bar.set_gpu_backend(info.backend_name, has_gpu, bool(self.settings["workers"].strip()))

    def load_models(self) -> None:
        """Load what the model bar shows, unless exactly that is already loaded (or loading), or
        it shows "Choose a model"."""
        s, bar = self.settings, self._bar
        if not bar.has_target():
            return
        s.set("target_path", bar.target_path())
        s.set("draft_path", bar.draft_path())
        s.set("n_gpu_layers", bar.target_gpu.value())
        s.set("draft_n_gpu_layers", bar.draft_gpu.value())
        self._save()
        threads = s["n_threads"] or None  # None: the engine measures which count is fastest
        command = Load(
            target=s["target_path"],  # "" is the default model; the engine process finds it
            target_options=ModelOptions(
                n_gpu_layers=s["n_gpu_layers"],
                n_ctx=s["n_ctx"],
                n_threads=threads,
                prompt_cache_mb=s["prompt_cache_mb"],
                workers=parse_workers(s["workers"]),
                split=LayerSplit.parse(s["worker_split"]),
            ),
            draft=s["draft_path"] or None,
            draft_options=ModelOptions(
                n_gpu_layers=s["draft_n_gpu_layers"],
                n_ctx=s["n_ctx"],
                n_threads=threads,
                prompt_cache_mb=s["prompt_cache_mb"],
            ),
            plan=AutoPlan(requested_drafter(s), s["draft_max"]),
            history=str(self._history.path),  # what the n-gram cache learns from
        )
        if command == self._client.last_load and self._client.running:
            return  # e.g. a GPU-layers box lost focus without a change
        bar.set_loading("Loading…")
        self._client.load(command)
        self.state_changed.emit()

    def edit_workers(self) -> None:
        """Models → Workers…: change the workers and reload when they changed."""
        from desktop_app.ui.models.workers_dialog import WorkersDialog

        dialog = WorkersDialog(self.settings["workers"], self.settings["worker_split"], self._window)
        if dialog.exec() != WorkersDialog.DialogCode.Accepted:
            return
        self.settings.set("workers", dialog.workers.text().strip())
        self.settings.set("worker_split", dialog.split.text().strip())
        self._save()
        self._show_gpu()  # workers hold target layers, even from a CPU-only build
        if not self._bar.has_target():  # after a failed load: the target the settings keep
            self._bar.show_paths(self.settings["target_path"], self.settings["draft_path"])
        self.load_models()

    def open_library(self) -> ModelLibraryWindow:
        """Show the model library (one non-modal window), rescanning the models folder."""
        if self.library is None:
            # Not at start-up: the library pulls in llama.cpp (vocabulary checks), which the window
            # process otherwise never loads (tests/ui/test_engine_process.py).
            from desktop_app.ui.models.model_library import ModelLibraryWindow

            self.library = ModelLibraryWindow(parent=self._window)
            self.library.setWindowFlag(Qt.WindowType.Window)  # its own window, closed with the main one
            self.library.target_chosen.connect(lambda path: self._use_library_file(path, as_draft=False))
            self.library.draft_chosen.connect(lambda path: self._use_library_file(path, as_draft=True))
        self.library.refresh()
        self.library.show()
        self.library.raise_()
        self.library.activateWindow()
        return self.library

    def _use_library_file(self, path: str, as_draft: bool) -> None:
        if not self._bar.isEnabled():
            self._show_error("Stop the answer before switching models")
            return
        self._bar.use_file(path, as_draft=as_draft)

    def _remember_file(self, path: str) -> None:
        self.settings.add_recent_file(path)
        self._save()
        self._bar.set_recent(self.settings["recent_files"])

    @Slot(object)
    def _on_model_loaded(self, loaded: LoadedModels) -> None:
        bar = self._bar
        note = f"Ready: {loaded.target.name}"
        if loaded.speculation_refusal:
            note += " (speculation unavailable)"
            bar.status.setToolTip(plain_tip(loaded.speculation_refusal))
        else:
            bar.status.setToolTip(plain_tip(f"Drafting available: {loaded.drafting_note}"))
        bar.set_idle(note)
        self._banner.hide()
        if loaded.draft_error:
            bar.set_compatibility(False, loaded.draft_error)
        elif loaded.draft is not None:
            bar.set_compatibility(True, loaded.draft_compatibility or "")
        else:
            bar.set_compatibility(None)
        self._status.set_models(loaded)
        self.state_changed.emit()

    @Slot(object)
    def _on_load_failed(self, failed: LoadFailed) -> None:
        s, bar = self.settings, self._bar
        if failed.bad_file:  # not a model: not offered again, nor loaded at the next start
            s.forget_recent_file(failed.bad_file)
            bar.set_recent(s["recent_files"])
        models = failed.models
        if models is not None:  # the previous models still answer: the bar and settings name them
            kept = self._client.loaded_load  # its target "" is the built-in model
            target = kept.target if kept is not None else models.target.path
            draft = models.draft.path if models.draft is not None else ""
            s.set("target_path", target)
            s.set("draft_path", draft)
            bar.show_paths(target, draft)
            bar.set_idle(f"Ready: {models.target.name}")
        else:
            if failed.bad_file and s["target_path"] == failed.bad_file:
                s.set("target_path", "")  # the next start loads the built-in model
            bar.show_nothing_loaded(s["target_path"])
            bar.set_idle("Load failed")
        self._save()
        self._status.set_models(failed.models)
        self._banner.show_failure(failed.message, failed.models.target.name if failed.models else None)
        self.state_changed.emit()
