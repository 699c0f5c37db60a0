"""The model library window: local GGUF files with their metadata, import / delete, "use as
target" / "use as draft", which drafts fit which targets, and the curated catalog to download.

Scanning headers, checking vocabularies, copying files and downloading all run on a background
thread (:class:`LibraryJobs`); results come back as signals, so the window never blocks.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, Signal, SignalInstance
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QMessageBox,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from desktop_app.library.catalog import CatalogPair, load_catalog
from desktop_app.library.errors import LibraryError
from desktop_app.library.local import (
    LocalModel,
    PairVerdict,
    compatibility_matrix,
    delete_model,
    import_model,
    scan_models,
)
from desktop_app.library.units import human_params, human_size
from desktop_app.ui.download_widget import DownloadWidget
from desktop_app.ui.thread_relay import hold

MODEL_COLUMNS = ("File", "Architecture", "Parameters", "Quantization", "Context", "Size", "Status")
CATALOG_COLUMNS = ("Pair", "Drafting", "Uses", "Target", "Draft", "Download", "RAM need", "License")


class _JobRelay(QObject):
    """What one job thread emits on, never this window's objects: the window (and its LibraryJobs)
    can be deleted by the GUI thread while a job runs, and a thread emitting on a QObject that is
    being deleted crashes (see desktop_app/ui/download_widget.py). No parent; the job thread holds
    it and hands it to the GUI thread with ``deleteLater`` after its last signal."""

    done = Signal(object, object)
    failed = Signal(str)


class LibraryJobs(QObject):
    """Runs library work one job at a time on a background thread and reports through signals.

    Signals:
        done(object, object): the job's callback and its result, on the GUI thread.
        failed(str): a job raised; the message is for the user.
    """

    done = Signal(object, object)
    failed = Signal(str)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._lock = threading.Lock()  # one job at a time: scans must not race a delete or import
        self.done.connect(lambda callback, result: callback(result))

    def run(self, work: Callable[[], Any], on_done: Callable[[Any], None]) -> threading.Thread:
        relay = _JobRelay()
        relay.done.connect(self.done)  # queued to this object; Qt drops them if it is deleted
        relay.failed.connect(self.failed)
        lock = self._lock  # the thread holds the lock and the relay, never this QObject

        def target() -> None:
            try:
                with lock:
                    try:
                        result = work()
                    except Exception as exc:  # noqa: BLE001 - any failure is shown to the user, never lost
                        relay.failed.emit(str(exc))
                        return
                relay.done.emit(on_done, result)
            finally:
                relay.deleteLater()

        thread = threading.Thread(target=target, name="model library", daemon=True)
        hold(relay, thread)
        thread.start()
        return thread


def _table(name: str, headers: tuple[str, ...]) -> QTableWidget:
    table = QTableWidget(0, len(headers))
    table.setObjectName(name)
    table.setHorizontalHeaderLabels(list(headers))
    table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
    table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
    table.verticalHeader().setVisible(False)
    return table


def _fill(table: QTableWidget, rows: list[tuple[str, ...]]) -> None:
    table.setRowCount(len(rows))
    for r, row in enumerate(rows):
        for c, text in enumerate(row):
            table.setItem(r, c, QTableWidgetItem(text))


class ModelLibraryWindow(QWidget):
    """Signals:
    target_chosen(str): "Use as target" on a model (its path).
    draft_chosen(str): "Use as draft" on a model (its path).
    library_changed(): files were added or removed.
    refreshed(): the model list and compatibility view were updated.
    error(str): an action failed (one line).
    """

    target_chosen = Signal(str)
    draft_chosen = Signal(str)
    library_changed = Signal()
    refreshed = Signal()
    error = Signal(str)

    def __init__(
        self, extra_folders: list[Path] | None = None, parent: QWidget | None = None, **download_options: Any
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle("Model library")
        self.extra_folders = list(extra_folders or [])
        self.download_options = download_options  # endpoint, token... for tests and mirrors
        self.models: list[LocalModel] = []
        self.verdicts: list[PairVerdict] = []
        self.jobs = LibraryJobs(self)
        self.jobs.failed.connect(self._show_error)
        self.status = QLabel("")
        self.status.setObjectName("libraryStatus")

        self.model_table = _table("modelTable", MODEL_COLUMNS)
        buttons = QHBoxLayout()
        self.import_button = self._button("Import…", "importModel", self._ask_import, buttons)
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

        self.compat_table = _table("compatTable", ("Target", "Draft", "Verdict"))
        self.catalog_table = _table("catalogTable", CATALOG_COLUMNS)
        self.download_target_button = QPushButton("Download target")
        self.download_draft_button = QPushButton("Download draft")
        self.download_target_button.clicked.connect(lambda: self._download_selected("target"))
        self.download_draft_button.clicked.connect(lambda: self._download_selected("draft"))
        self.downloads = DownloadWidget()
        self.downloads.finished.connect(lambda _path: self._changed())
        self.downloads.failed.connect(self._show_error)
        catalog_tab = QWidget()
        catalog_layout = QVBoxLayout(catalog_tab)
        catalog_layout.addWidget(self.catalog_table)
        row = QHBoxLayout()
        row.addWidget(self.download_target_button)
        row.addWidget(self.download_draft_button)
        catalog_layout.addLayout(row)
        catalog_layout.addWidget(self.downloads)

        self.tabs = QTabWidget()
        self.tabs.addTab(local_tab, "Local models")
        self.tabs.addTab(self.compat_table, "Compatibility")
        self.tabs.addTab(catalog_tab, "Catalog")
        layout = QVBoxLayout(self)
        layout.addWidget(self.tabs)
        layout.addWidget(self.status)
        self.catalog: list[CatalogPair] = []
        self._load_catalog()

    def _button(self, text: str, name: str, slot: Callable[[], None], row: QHBoxLayout) -> QPushButton:
        button = QPushButton(text)
        button.setObjectName(name)
        button.clicked.connect(slot)
        row.addWidget(button)
        return button

    # ----------------------------------------------------------------- data
    def refresh(self) -> None:
        """Rescan the folders and recheck compatibility in the background."""
        self.status.setText("Scanning models…")
        folders = list(self.extra_folders)

        def work() -> tuple[list[LocalModel], list[PairVerdict]]:
            found = scan_models(folders)
            return found, compatibility_matrix(found)

        self.jobs.run(work, self._show_models)

    def _show_models(self, result: tuple[list[LocalModel], list[PairVerdict]]) -> None:
        self.models, self.verdicts = result
        _fill(self.model_table, [self._model_row(m) for m in self.models])
        _fill(
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
        fits = sum(v.compatibility.compatible for v in self.verdicts)
        self.status.setText(f"{len(self.models)} model file(s); {fits} draft/target pair(s) fit")
        self.refreshed.emit()

    @staticmethod
    def _model_row(m: LocalModel) -> tuple[str, ...]:
        if m.error:
            return (m.path.name, "-", "-", "-", "-", human_size(m.size_bytes), m.error)
        return (
            m.path.name,
            m.architecture,
            human_params(m.n_parameters),
            m.quantization,
            str(m.context_length or "-"),
            human_size(m.size_bytes),
            "ok" + (f" · {m.drafting}" if m.drafting else ""),
        )

    def _load_catalog(self) -> None:
        try:
            self.catalog = load_catalog()
        except LibraryError as exc:
            self.status.setText(str(exc))
            return
        _fill(self.catalog_table, [self._catalog_row(p) for p in self.catalog])
        for r, pair in enumerate(self.catalog):  # the one-line note on when the pair pays
            item = self.catalog_table.item(r, 0)
            if item is not None:
                item.setToolTip(pair.notes)

    @staticmethod
    def _catalog_row(p: CatalogPair) -> tuple[str, ...]:
        draft = f"{p.draft.filename} ({p.draft.size_text})" if p.draft else f"none ({p.drafting_label})"
        return (
            p.name,
            p.drafting_label,
            ", ".join(p.uses),
            f"{p.target.filename} ({p.target.size_text})",
            draft,
            p.download_text,
            p.ram_text,
            p.license,
        )

    def selected_model(self) -> LocalModel | None:
        row = self.model_table.currentRow()
        return self.models[row] if 0 <= row < len(self.models) else None

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
        answer = QMessageBox.question(self, "Model library", question)
        return answer == QMessageBox.StandardButton.Yes

    def _delete_selected(self) -> None:
        model = self.selected_model()
        if model is None or not self.confirm(f"Delete {model.path.name} ({human_size(model.size_bytes)}) from disk?"):
            return
        folders = list(self.extra_folders)
        self.jobs.run(lambda: delete_model(model.path, folders), lambda _r: self._changed())

    def _ask_import(self) -> None:
        path, _filter = QFileDialog.getOpenFileName(self, "Import a GGUF model", "", "GGUF models (*.gguf)")
        if path:
            self.import_file(Path(path))

    def import_file(self, path: Path) -> None:
        """Copy ``path`` into the models folder in the background, then refresh."""
        self.status.setText(f"Importing {path.name}…")
        self.jobs.run(lambda: import_model(path), lambda _m: self._changed())

    def _download_selected(self, role: str) -> None:
        row = self.catalog_table.currentRow()
        if not 0 <= row < len(self.catalog):
            return self._show_error("Select a pair in the catalog first")
        pair = self.catalog[row]
        entry = getattr(pair, role)
        if entry is None:
            return self._show_error(f"{pair.name} needs no draft file: it drafts with {pair.drafting_label}")
        if self.downloads.running:
            return self._show_error("A download is already running")
        self.downloads.start(entry.repo, entry.file, **self.download_options)

    def _changed(self) -> None:
        self.library_changed.emit()
        self.refresh()

    def _show_error(self, message: str) -> None:
        self.status.setText(message)
        self.error.emit(message)
