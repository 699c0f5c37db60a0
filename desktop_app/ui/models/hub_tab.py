"""The library's Hugging Face tab: search the hub (or ``HF_ENDPOINT``'s mirror) for GGUF
repositories, pick one, see its quantizations with their size, whether each fits this machine and
how fast it is predicted to decode here, the suggested one selected (library/hub_search.py), and
download it with progress and Retry (the catalog's download path).

The search and the file listing run on a background thread (:class:`LibraryJobs`, one of its own,
so a library scan never holds a search back); without a network the tab says so in one line."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QBrush, QPalette
from PySide6.QtWidgets import QHBoxLayout, QLineEdit, QPushButton, QSizePolicy, QSplitter, QVBoxLayout, QWidget

from desktop_app import paths
from desktop_app.library.fit import MachineMemory
from desktop_app.library.hub_search import (
    GgufChoice,
    HubRepo,
    HubSearchError,
    default_choice,
    repo_choices,
    search_gguf,
)
from desktop_app.library.speed import FAST_ENOUGH_TOKENS_S, SpeedGuess, speed_text
from desktop_app.ui.models.download_widget import DownloadWidget
from desktop_app.ui.models.library_jobs import LibraryJobs
from desktop_app.ui.models.library_tables import fill_table, make_table
from desktop_app.ui.widgets.plain_text import plain_label, plain_tip

REPO_COLUMNS = ("Repository", "Downloads", "Likes", "Updated")
FILE_COLUMNS = ("Quantization", "Size", "This machine", "Speed here", "File")
SUGGESTED = " (suggested)"


class HubTab(QWidget):
    """Signals:
    error(str): a download failed (in plain words).
    downloaded(str): a file finished downloading (its path).
    searched(): search results (or the reason there are none) are shown.
    listed(): a repository's quantizations (or the reason there are none) are shown.
    """

    error = Signal(str)
    downloaded = Signal(str)
    searched = Signal()
    listed = Signal()

    def __init__(
        self, memory: MachineMemory, speed: SpeedGuess, download_options: dict[str, Any], parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.download_options = download_options  # endpoint, token, timeout, dest_dir: tests and mirrors
        self.memory, self.speed = memory, speed
        self.repos: list[HubRepo] = []
        self.repo: HubRepo | None = None  # whose quantizations are listed
        self.choices: list[GgufChoice] = []
        self.suggested: GgufChoice | None = None
        self._asked = 0  # which search or listing the shown one must answer (older answers are dropped)
        self._queue: list[tuple[str, str]] = []  # (repo, file): parts of a split file still to download
        self.jobs = LibraryJobs(self)
        self.search = QLineEdit()
        self.search.setObjectName("hubSearch")
        self.search.setPlaceholderText("Search Hugging Face for GGUF models, e.g. Qwen2.5-7B")
        self.search.setAccessibleName("Search Hugging Face")
        self.search.setClearButtonEnabled(True)
        self.search.returnPressed.connect(self.run_search)
        self.search_button = QPushButton("Search")
        self.search_button.setObjectName("hubSearchButton")
        self.search_button.clicked.connect(self.run_search)
        self.status = plain_label("Search Hugging Face for a model, then pick a repository and a quantization.")
        self.status.setObjectName("hubStatus")
        self.status.setWordWrap(True)
        self.status.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Minimum)  # all its lines
        self.repo_table = make_table("hubResults", REPO_COLUMNS)
        self.repo_table.itemSelectionChanged.connect(self._repo_selected)
        self.file_table = make_table("hubFiles", FILE_COLUMNS)
        self.download_button = QPushButton("Download")
        self.download_button.setObjectName("hubDownload")
        self.download_button.setEnabled(False)
        self.download_button.clicked.connect(self.download_selected)
        self.file_table.itemSelectionChanged.connect(self._update_button)
        self.downloads = DownloadWidget()
        self.downloads.finished.connect(self._on_downloaded)
        self.downloads.failed.connect(self.error)
        self._lay_out()

    def _lay_out(self) -> None:
        row = QHBoxLayout()
        row.addWidget(self.search, 1)
        row.addWidget(self.search_button)
        tables = QSplitter(Qt.Orientation.Vertical)
        tables.addWidget(self.repo_table)
        tables.addWidget(self.file_table)
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        buttons.addWidget(self.download_button)
        layout = QVBoxLayout(self)
        layout.addLayout(row)
        layout.addWidget(self.status)
        layout.addWidget(tables, 1)
        layout.addLayout(buttons)
        layout.addWidget(self.downloads)

    def _hub_options(self) -> dict[str, Any]:
        return {k: v for k, v in self.download_options.items() if k in ("endpoint", "token", "timeout")}

    def set_machine(self, memory: MachineMemory, speed: SpeedGuess) -> None:
        """Mark the quantizations for this memory and predicted speed (the catalog's)."""
        self.memory, self.speed = memory, speed
        if self.choices:
            self._show_choices(self.choices, keep_selection=True)

    # ----------------------------------------------------------------- search
    def run_search(self) -> None:
        """Search the hub for the box's text, in the background."""
        text = self.search.text().strip()
        self._asked += 1
        asked, options = self._asked, self._hub_options()
        self.status.setText(f"Searching Hugging Face for “{text}”…" if text else "Searching Hugging Face…")

        def work() -> list[HubRepo] | HubSearchError:
            try:
                return search_gguf(text, **options)
            except HubSearchError as exc:
                return exc

        self.jobs.run(work, lambda result: self._show_repos(result) if asked == self._asked else None)

    def _show_repos(self, result: list[HubRepo] | HubSearchError) -> None:
        self.repos = [] if isinstance(result, HubSearchError) else result
        self.repo = None
        self._show_choices([])
        fill_table(
            self.repo_table,
            [(r.repo_id, f"{r.downloads:,}", f"{r.likes:,}", r.updated_text) for r in self.repos],
        )
        if isinstance(result, HubSearchError):
            self.status.setText(result.plain)
            self.status.setToolTip(plain_tip(str(result)))
        else:
            found = f"{len(self.repos)} GGUF repositories" if self.repos else "No GGUF repositories found"
            self.status.setText(f"{found}: pick one to see its quantizations." if self.repos else f"{found}.")
            self.status.setToolTip("")
        self.searched.emit()

    def select_repo(self, repo_id: str) -> None:
        """Select a search result (as a click does): its quantizations are listed."""
        self.repo_table.selectRow([r.repo_id for r in self.repos].index(repo_id))

    def _repo_selected(self) -> None:
        row = self.repo_table.currentRow()
        if not self.repo_table.selectedItems() or not 0 <= row < len(self.repos) or self.repos[row] == self.repo:
            return
        repo = self.repo = self.repos[row]
        self._asked += 1
        asked, options = self._asked, self._hub_options()
        self._show_choices([])
        self.status.setText(f"Listing the GGUF files of {repo.repo_id}…")

        def work() -> list[GgufChoice] | HubSearchError:
            try:
                return repo_choices(repo.repo_id, **options)
            except HubSearchError as exc:
                return exc

        self.jobs.run(work, lambda result: self._listed(result) if asked == self._asked else None)

    def _listed(self, result: list[GgufChoice] | HubSearchError) -> None:
        if isinstance(result, HubSearchError):
            self._show_choices([])
            self.status.setText(result.plain)
            self.status.setToolTip(plain_tip(str(result)))
        else:
            self._show_choices(result)
            self.status.setToolTip("")
        self.listed.emit()

    def _show_choices(self, choices: list[GgufChoice], keep_selection: bool = False) -> None:
        kept = self.selected_choice() if keep_selection else None
        self.choices = choices
        self.suggested = default_choice(choices, self.memory, self.speed)
        rows: list[tuple[str, ...]] = []
        for c in choices:
            tokens_s = c.tokens_per_s(self.speed)
            slow = "" if tokens_s >= FAST_ENOUGH_TOKENS_S else " (slow)"
            speed = speed_text(tokens_s) + slow if c.size_bytes is not None else "-"
            mark = SUGGESTED if c == self.suggested else ""
            rows.append((c.quantization + mark, c.size_text, c.fit_text(self.memory), speed, c.files_text))
        items = fill_table(self.file_table, rows)
        grey = QBrush(self.palette().color(QPalette.ColorGroup.Disabled, QPalette.ColorRole.Text))
        speed_tip = plain_tip(
            f"Predicted plain decoding: the file's bytes read per token at {self.speed.basis()}. "
            f"Under {FAST_ENOUGH_TOKENS_S:.0f} tokens/s is marked slow."
        )
        for choice, row in zip(choices, items):
            row[3].setToolTip(speed_tip)
            row[4].setToolTip(plain_tip("\n".join(choice.files)))
            for item in row if not choice.fits(self.memory) else ():
                item.setForeground(grey)
        selected = kept if kept in choices else self.suggested
        if selected is not None:
            self.file_table.selectRow(choices.index(selected))
        if self.repo is not None and choices:
            self.status.setText(self._summary())
        self._update_button()

    def _summary(self) -> str:
        assert self.repo is not None
        count = f"{self.repo.repo_id}: {len(self.choices)} quantization{'s' if len(self.choices) != 1 else ''}"
        if self.suggested is None:
            return f"{count}; none fits this machine's memory ({self.memory.describe()})."
        return (
            f"{count}; {self.suggested.quantization} suggested: the largest that fits"
            f" and runs at {FAST_ENOUGH_TOKENS_S:.0f}+ tokens/s here."
        )

    def selected_choice(self) -> GgufChoice | None:
        row = self.file_table.currentRow()
        return self.choices[row] if 0 <= row < len(self.choices) and self.file_table.selectedItems() else None

    def _update_button(self) -> None:
        self.download_button.setEnabled(self.selected_choice() is not None)

    # ----------------------------------------------------------------- download
    def download_selected(self) -> None:
        """Download the selected quantization (every part of a split file, one after the other)."""
        choice, repo = self.selected_choice(), self.repo
        if choice is None or repo is None:
            return self.error.emit("Pick a repository and a quantization first")
        if self.downloads.running:
            return self.error.emit("A download is already running")
        folder = Path(self.download_options.get("dest_dir") or paths.models_dir())
        missing = [f for f in choice.files if not (folder / f.rsplit("/", 1)[-1]).exists()]
        if not missing:
            return self.error.emit(f"{choice.files_text} is already in the library")
        self._queue = [(repo.repo_id, f) for f in missing[1:]]
        self.downloads.start(repo.repo_id, missing[0], **self.download_options)

    def _on_downloaded(self, path: str) -> None:
        if self._queue and not self.downloads.running:
            self.downloads.start(*self._queue.pop(0), **self.download_options)
            return
        self.downloaded.emit(path)
