"""The model library window: local GGUF files with their metadata (the built-in demo model first),
add / remove, "use as target" / "use as draft", which drafts fit which targets, and the curated
catalog to download (:class:`CatalogTab`: what fits this machine first, search, Retry), and any GGUF
on Hugging Face (:class:`HubTab`: search, a quantization that fits and is fast enough here).

Scanning headers, checking vocabularies, adding files, measuring the machine and downloading
all run on background threads (:class:`LibraryJobs`); results come back as signals, so the
window never blocks. It opens at a sensible size on the screen, centred on the main window.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from PySide6.QtCore import Signal, SignalInstance
from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import (
    QCheckBox,
    QHBoxLayout,
    QMessageBox,
    QPushButton,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from desktop_app.engine.model_speeds import MeasuredSpeed
from desktop_app.engine.projector_names import paired_projector
from desktop_app.library.fit import MachineMemory, measure_memory
from desktop_app.library.local import (
    LocalModel,
    PairVerdict,
    compatibility_matrix,
    delete_model,
    import_model,
    link_model,
    scan_models,
)
from desktop_app.library.speed import SpeedGuess, file_speed_text, kept_speeds
from desktop_app.library.summary import compatibility_note, library_status
from desktop_app.library.units import human_params, human_size
from desktop_app.ui.models.catalog_tab import CatalogTab
from desktop_app.ui.models.hub_tab import HubTab
from desktop_app.ui.models.library_jobs import LibraryJobs
from desktop_app.ui.models.library_tables import fill_table, make_table
from desktop_app.ui.widgets.file_dialogs import MODELS, ask_open_file
from desktop_app.ui.widgets.plain_text import plain_box, plain_label
from desktop_app.ui.window.window_placement import place_near

MODEL_COLUMNS = ("File", "Architecture", "Parameters", "Quantization", "Context", "Size", "Status", "Speed here")
PREFERRED_SIZE = (900, 600)
DEMO_LABEL = "built-in demo"


def model_row(m: LocalModel, speed: SpeedGuess, kept: Sequence[MeasuredSpeed] = ()) -> tuple[str, ...]:
    """A local file's row; its speed as measured here, else predicted from its size (library/speed.py)."""
    if m.error:
        return (m.path.name, "-", "-", "-", "-", human_size(m.size_bytes), m.error, "-")
    where = DEMO_LABEL if m.builtin else f"linked from {m.path.parent}" if m.linked else "ok"
    return (
        m.path.name,
        m.architecture,
        human_params(m.n_parameters),
        m.quantization,
        str(m.context_length or "-"),
        human_size(m.size_bytes),
        where + (f" · {m.drafting}" if m.drafting else ""),
        file_speed_text(m.path.name, m.size_bytes, speed, kept),
    )


class ModelLibraryWindow(QWidget):
    """Signals:
    target_chosen(str): "Use as target" on a model (its path).
    draft_chosen(str): "Use as draft" on a model (its path).
    library_changed(): files were added or removed.
    refreshed(): the model list and compatibility view were updated.
    error(str): an action failed (one line).

    ``memory`` is this machine's memory for the catalog's fit marks; by default it is measured
    (RAM at once, a GPU's memory in the background).
    """

    target_chosen = Signal(str)
    draft_chosen = Signal(str)
    library_changed = Signal()
    refreshed = Signal()
    error = Signal(str)

    def __init__(
        self,
        extra_folders: list[Path] | None = None,
        parent: QWidget | None = None,
        memory: MachineMemory | None = None,
        **download_options: Any,
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle("Model library")
        self.extra_folders = list(extra_folders or [])
        self.models: list[LocalModel] = []
        self.verdicts: list[PairVerdict] = []
        self._placed = False
        self.jobs = LibraryJobs(self)
        self.jobs.failed.connect(self._show_error)
        self.status = plain_label()
        self.status.setObjectName("libraryStatus")

        self.model_table = make_table("modelTable", MODEL_COLUMNS)
        self.model_table.itemSelectionChanged.connect(self._update_buttons)
        buttons = QHBoxLayout()
        self.import_button = self._button("Add file…", "importModel", self._ask_import, buttons)
        self.copy_box = QCheckBox("Copy into the models folder")
        self.copy_box.setObjectName("copyOnImport")
        self.copy_box.setToolTip("Off: the library uses the file where it is (no copy, no extra disk space)")
        buttons.addWidget(self.copy_box)
        self.delete_button = self._button("Delete", "deleteModel", self._delete_selected, buttons)
        self.target_button = self._button(
            "Use as target", "useAsTarget", lambda: self._choose(self.target_chosen), buttons
        )
        self.draft_button = self._button("Use as draft", "useAsDraft", lambda: self._choose(self.draft_chosen), buttons)
        self.refresh_button = self._button("Refresh", "refreshLibrary", self.refresh, buttons)
        local_tab = QWidget()
        local_layout = QVBoxLayout(local_tab)
        local_layout.addWidget(self.model_table)
        local_layout.addLayout(buttons)

        self.compat_table = make_table("compatTable", ("Target", "Draft", "Verdict"))
        self.compat_note = plain_label(compatibility_note([], []))
        self.compat_note.setObjectName("compatNote")
        self.compat_note.setWordWrap(True)
        compat_tab = QWidget()
        compat_layout = QVBoxLayout(compat_tab)
        compat_layout.addWidget(self.compat_note)
        compat_layout.addWidget(self.compat_table)
        self.catalog_tab = CatalogTab(memory or measure_memory(), download_options)
        self.catalog_tab.error.connect(self._show_error)
        self.catalog_tab.downloaded.connect(lambda _path: self._changed())
        self.catalog_tab.speed_changed.connect(self._show_speeds)
        self.hub_tab = HubTab(self.catalog_tab.memory, self.catalog_tab.speed, download_options)
        self.hub_tab.error.connect(self._show_error)
        self.hub_tab.downloaded.connect(lambda _path: self._changed())
        if self.catalog_tab.load_problem:
            self.status.setText(self.catalog_tab.load_problem)
        if memory is None:  # a GPU's memory needs llama.cpp's device list: off the GUI thread
            self.jobs.run(lambda: measure_memory(with_gpu=True), self.catalog_tab.set_memory)

        self.tabs = QTabWidget()
        self.tabs.addTab(local_tab, "Local models")
        self.tabs.addTab(compat_tab, "Compatibility")
        self.tabs.addTab(self.catalog_tab, "Catalog")
        self.tabs.addTab(self.hub_tab, "Hugging Face")
        layout = QVBoxLayout(self)
        layout.addWidget(self.tabs)
        layout.addWidget(self.status)

    def _button(self, text: str, name: str, slot: Callable[[], None], row: QHBoxLayout) -> QPushButton:
        button = QPushButton(text)
        button.setObjectName(name)
        button.clicked.connect(slot)
        row.addWidget(button)
        return button

    # The catalog tab's parts, by the names the window has always had.
    @property
    def catalog(self) -> list[Any]:
        return self.catalog_tab.catalog

    @property
    def catalog_table(self) -> Any:
        return self.catalog_tab.table

    @property
    def downloads(self) -> Any:
        return self.catalog_tab.downloads

    @property
    def download_target_button(self) -> QPushButton:
        return self.catalog_tab.download_target_button

    @property
    def download_draft_button(self) -> QPushButton:
        return self.catalog_tab.download_draft_button

    def showEvent(self, event: QShowEvent) -> None:  # noqa: N802 - Qt API
        if not self._placed:  # the first time: 900x600 or the screen, centred on the main window
            self._placed = True
            place_near(self, self.parentWidget(), PREFERRED_SIZE)
        super().showEvent(event)

    # ----------------------------------------------------------------- data
    def refresh(self) -> None:
        """Rescan the folders and recheck compatibility in the background."""
        self.status.setText("Scanning models…")
        folders = list(self.extra_folders)

        def work() -> tuple[list[LocalModel], list[PairVerdict]]:
            found = scan_models(folders, include_builtin=True)
            return found, compatibility_matrix([m for m in found if not m.builtin])

        self.jobs.run(work, self._show_models)

    def _show_speeds(self) -> None:
        """The local files' and the hub tab's predicted speeds again, in place (the selection stays)."""
        self.hub_tab.set_machine(self.catalog_tab.memory, self.catalog_tab.speed)
        column = MODEL_COLUMNS.index("Speed here")
        for row, model in enumerate(self.models):
            item = self.model_table.item(row, column)
            if item is not None and not model.error:
                tab = self.catalog_tab
                item.setText(file_speed_text(model.path.name, model.size_bytes, tab.speed, tab.kept))

    def _show_models(self, result: tuple[list[LocalModel], list[PairVerdict]]) -> None:
        self.models, self.verdicts = result
        self.catalog_tab.kept = kept_speeds()  # models may have run since: their measured speeds
        fill_table(self.model_table, [model_row(m, self.catalog_tab.speed, self.catalog_tab.kept) for m in self.models])
        fill_table(
            self.compat_table,
            [
                (
                    v.target.path.name,
                    v.draft.path.name,
                    f"fits: {v.drafting.summary() if v.drafting else ''}"
                    if v.compatibility.compatible
                    else v.compatibility.summary(),
                )
                for v in self.verdicts
            ],
        )
        self.compat_note.setText(compatibility_note(self.models, self.verdicts))
        self.status.setText(library_status(self.models, self.verdicts))
        self._update_buttons()
        self.refreshed.emit()

    def selected_model(self) -> LocalModel | None:
        row = self.model_table.currentRow()
        return self.models[row] if 0 <= row < len(self.models) else None

    def _update_buttons(self) -> None:
        model = self.selected_model()
        self.delete_button.setEnabled(model is not None and not model.builtin)
        self.delete_button.setText("Remove" if model is not None and model.linked else "Delete")

    # ----------------------------------------------------------------- actions
    def _choose(self, signal: SignalInstance) -> None:
        model = self.selected_model()
        if model is None:
            return self._show_error("Select a model first")
        if model.error:
            return self._show_error(f"{model.path.name} cannot be used: {model.error}")
        signal.emit(str(model.path))

    def confirm(self, question: str) -> bool:
        """Ask the user; tests replace this."""
        buttons = QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No
        box = plain_box(QMessageBox.Icon.Question, "Model library", question, buttons, self)  # file names as written
        return box.exec() == QMessageBox.StandardButton.Yes

    def _delete_selected(self) -> None:
        model = self.selected_model()
        if model is None or model.builtin:
            return
        own = paired_projector(model.path)  # saved with it from the catalog, and listed here
        projector = None if model.linked else next((m.path for m in self.models if m.path == own), None)
        if model.linked:
            question = f"Remove {model.path.name} from the library? The file stays in {model.path.parent}."
        else:
            question = f"Delete {model.path.name} ({human_size(model.size_bytes)}) from disk?"
            if projector is not None:
                question += f" Its vision projector {projector.name} is deleted with it."
        if not self.confirm(question):
            return
        folders, both = list(self.extra_folders), projector is not None
        self.jobs.run(lambda: delete_model(model.path, folders, with_projector=both), lambda _r: self._changed())

    def _ask_import(self) -> None:
        path = ask_open_file(self, "Add a GGUF model", MODELS, "GGUF models (*.gguf)")
        if path:
            self.import_file(Path(path), copy=self.copy_box.isChecked())

    def import_file(self, path: Path, copy: bool = False) -> None:
        """Add ``path`` to the library in the background, then refresh: used where it is (the
        library records its path), or copied into the models folder when ``copy``."""
        self.status.setText(f"{'Copying' if copy else 'Adding'} {path.name}…")
        self.jobs.run(lambda: import_model(path) if copy else link_model(path), lambda _m: self._changed())

    def _changed(self) -> None:
        self.library_changed.emit()
        self.refresh()

    def _show_error(self, message: str) -> None:
        self.status.setText(message)
        self.error.emit(message)
