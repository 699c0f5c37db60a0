"""The library's catalog tab: the curated pairs, those that fit this machine first (of those, the
ones predicted fast enough here first), each marked with what it needs against what the machine
has and how fast it is predicted to decode here (library/speed.py); a search box; downloads with
progress and Retry."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtGui import QBrush, QPalette
from PySide6.QtWidgets import QHBoxLayout, QLineEdit, QPushButton, QVBoxLayout, QWidget

from desktop_app import paths
from desktop_app.engine.model_speeds import MeasuredSpeed
from desktop_app.library.catalog import CatalogFile, CatalogPair, load_catalog
from desktop_app.library.errors import LibraryError
from desktop_app.library.fit import MachineMemory, PairFit, sort_by_fit
from desktop_app.library.speed import FAST_ENOUGH_TOKENS_S, SpeedGuess, before_any_run, kept_speeds, learned, speed_text
from desktop_app.ui.models.download_widget import DownloadWidget
from desktop_app.ui.models.library_tables import fill_table, make_table
from desktop_app.ui.widgets.plain_text import plain_tip

CATALOG_COLUMNS = (
    "Pair",
    "This machine",
    "Speed here",
    "Drafting",
    "Uses",
    "Target",
    "Draft",
    "Download",
    "RAM need",
    "License",
)


def _row(fit: PairFit, speed: SpeedGuess) -> tuple[str, ...]:
    p = fit.pair
    draft = f"{p.draft.filename} ({p.draft.size_text})" if p.draft else f"none ({p.drafting_label})"
    tokens_s = speed.of_pair(p)
    seeing = f" + vision projector ({p.projector.size_text})" if p.projector else ""
    return (
        p.name,
        fit.text,
        speed_text(tokens_s) + ("" if tokens_s >= FAST_ENOUGH_TOKENS_S else " (slow)"),
        p.drafting_label,
        ", ".join(p.uses),
        f"{p.target.filename} ({p.target.size_text}){seeing}",
        draft,
        p.download_text,
        p.ram_text,
        p.license,
    )


class CatalogTab(QWidget):
    """Signals:
    error(str): a catalog action failed, or a download failed (in plain words).
    downloaded(str): a file finished downloading (its path).
    speed_changed(): the rows were marked again, maybe with another predicted speed (``speed``).
    """

    error = Signal(str)
    downloaded = Signal(str)
    speed_changed = Signal()

    def __init__(self, memory: MachineMemory, download_options: dict[str, Any], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.download_options = download_options  # endpoint, token... for tests and mirrors
        self.memory = memory
        self.kept: list[MeasuredSpeed] = kept_speeds()  # the speeds of the models run here
        self.speed = learned(self.kept, before_any_run(), memory.vram_bytes is not None)  # what they taught
        self.pairs: list[CatalogPair] = []  # in catalog order
        self.fits: list[PairFit] = []  # in display order: those that fit first
        self._queue: list[CatalogFile] = []  # files of a pair still to download, after the current one
        self._current: tuple[CatalogPair, CatalogFile] | None = None  # the pair's file being fetched (Download pair)
        self.search = QLineEdit()
        self.search.setObjectName("catalogSearch")
        self.search.setPlaceholderText("Search pairs by name or family")
        self.search.setAccessibleName("Search the catalog")
        self.search.setClearButtonEnabled(True)
        self.search.textChanged.connect(self.apply_filter)
        self.table = make_table("catalogTable", CATALOG_COLUMNS)
        self.download_target_button = QPushButton("Download target")
        self.download_draft_button = QPushButton("Download draft")
        self.download_pair_button = QPushButton("Download pair")
        self.download_pair_button.setObjectName("downloadPair")
        self.download_target_button.clicked.connect(lambda: self._download_selected("target"))
        self.download_draft_button.clicked.connect(lambda: self._download_selected("draft"))
        self.download_pair_button.clicked.connect(self._download_selected_pair)
        self.downloads = DownloadWidget()
        self.downloads.finished.connect(self._on_downloaded)
        self.downloads.failed.connect(self._on_failed)
        layout = QVBoxLayout(self)
        layout.addWidget(self.search)
        layout.addWidget(self.table, 1)
        row = QHBoxLayout()
        for button in (self.download_pair_button, self.download_target_button, self.download_draft_button):
            row.addWidget(button)
        layout.addLayout(row)
        layout.addWidget(self.downloads)
        try:
            self.pairs = load_catalog()
        except LibraryError as exc:
            self.load_problem: str | None = str(exc)
        else:
            self.load_problem = None
        self.set_memory(memory)

    @property
    def catalog(self) -> list[CatalogPair]:
        """The pairs in the order shown."""
        return [f.pair for f in self.fits]

    def set_memory(self, memory: MachineMemory) -> None:
        """Mark and order the pairs for this machine's memory (the library measures it)."""
        self.memory = memory
        self.kept = kept_speeds()
        self.speed = learned(self.kept, before_any_run(), memory.vram_bytes is not None)
        self._show()

    def set_speed(self, speed: SpeedGuess) -> None:
        """Mark the pairs with this predicted speed (a test's, or one measured elsewhere)."""
        self.speed = speed
        self._show()

    def _show(self) -> None:
        selected = self.selected_pair()
        fast = self.speed.fast_enough
        self.fits = sorted(sort_by_fit(self.pairs, self.memory), key=lambda f: (not f.fits, not fast(f.pair)))
        items = fill_table(self.table, [_row(f, self.speed) for f in self.fits])
        grey = QBrush(self.palette().color(QPalette.ColorGroup.Disabled, QPalette.ColorRole.Text))
        speed_tip = plain_tip(
            f"Predicted plain decoding (drafting may add to it): the target's bytes read per token at "
            f"{self.speed.basis()}. Under {FAST_ENOUGH_TOKENS_S:.0f} tokens/s is marked slow."
        )
        for fit, row in zip(self.fits, items):
            row[0].setToolTip(plain_tip(fit.pair.notes))  # the one-line note on when the pair pays
            row[1].setToolTip(plain_tip(fit.text))
            row[2].setToolTip(speed_tip)
            for item in row if not fit.fits else ():
                item.setForeground(grey)
        if selected is not None:
            self.select(selected)
        self.apply_filter()
        self.speed_changed.emit()

    def apply_filter(self) -> None:
        """Show the pairs whose name, family or id contain every word of the search box."""
        words = self.search.text().lower().split()
        for r, fit in enumerate(self.fits):
            haystack = f"{fit.pair.name} {fit.pair.family} {fit.pair.id}".lower()
            self.table.setRowHidden(r, not all(w in haystack for w in words))

    def visible_pairs(self) -> list[CatalogPair]:
        return [f.pair for r, f in enumerate(self.fits) if not self.table.isRowHidden(r)]

    def selected_pair(self) -> CatalogPair | None:
        row = self.table.currentRow()
        return self.fits[row].pair if 0 <= row < len(self.fits) and not self.table.isRowHidden(row) else None

    def select(self, pair: CatalogPair) -> None:
        for r, fit in enumerate(self.fits):
            if fit.pair.id == pair.id:
                self.table.selectRow(r)

    # ----------------------------------------------------------------- downloads
    def download_pair(self, pair: CatalogPair) -> None:
        """Download the pair's files not yet in the models folder, one after the other."""
        if self.downloads.running:
            return self.error.emit("A download is already running")
        folder = Path(self.download_options.get("dest_dir") or paths.models_dir())
        missing = [f for f in pair.files if not (folder / f.filename).exists()]
        if not missing:
            return self.error.emit(f"{pair.name}: its files are already in the library")
        self.select(pair)
        self._queue = missing[1:]
        self._start(missing[0], pair)

    def _download_selected_pair(self) -> None:
        pair = self.selected_pair()
        if pair is None:
            return self.error.emit("Select a pair in the catalog first")
        self.download_pair(pair)

    def _download_selected(self, role: str) -> None:
        pair = self.selected_pair()
        if pair is None:
            return self.error.emit("Select a pair in the catalog first")
        entry = getattr(pair, role)
        if entry is None:
            return self.error.emit(f"{pair.name} needs no draft file: it drafts with {pair.drafting_label}")
        if self.downloads.running:
            return self.error.emit("A download is already running")
        self._queue = []
        self._start(entry)

    def _start(self, entry: CatalogFile, pair: CatalogPair | None = None) -> None:
        self._current = (pair, entry) if pair is not None else None
        self.downloads.start(entry.repo, entry.file, save_as=entry.filename, **self.download_options)

    def _on_downloaded(self, path: str) -> None:
        self.downloaded.emit(path)
        if self._queue and not self.downloads.running and self._current is not None:
            self._start(self._queue.pop(0), self._current[0])

    def _on_failed(self, reason: str) -> None:
        """A download failed; of a pair's files, say which (Retry resumes it, then the rest follow)."""
        if self._current is None:
            return self.error.emit(reason)
        pair, entry = self._current
        role = "vision projector" if entry is pair.projector else "draft" if entry is pair.draft else "target"
        self.error.emit(f"{pair.name}: the {role} {entry.filename} did not download. {reason}")

    def row_of(self, pair_id: str) -> int:
        return [f.pair.id for f in self.fits].index(pair_id)

    def fit_text(self, pair_id: str) -> str:
        """What the "This machine" column says about a pair."""
        return self.fits[self.row_of(pair_id)].text

    def speed_text(self, pair_id: str) -> str:
        """What the "Speed here" column says about a pair."""
        item = self.table.item(self.row_of(pair_id), CATALOG_COLUMNS.index("Speed here"))
        return item.text() if item is not None else ""
