"""The model bar: target and draft pickers, GPU layers, compatibility badge, progress."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QSpinBox,
    QWidget,
)

from desktop_app.ui.widgets.elided_label import ElidedLabel
from desktop_app.ui.widgets.file_dialogs import MODELS, ask_open_file
from desktop_app.ui.widgets.flow_layout import FlowLayout
from desktop_app.ui.widgets.plain_text import plain_tip

OPEN_FILE = "<open>"
OPEN_LIBRARY = "<library>"
CHOOSE_MODEL = "Choose a model"  # the target picker's text while no target is loaded
GPU_TIPS = ("Target layers on the GPU", "Draft layers on the GPU")
NO_GPU_TIP = (
    "The llama.cpp this app loaded has no GPU backend ({backend}): every layer runs on the CPU, "
    "so there are no GPU layers to set. A build with CUDA, Metal or Vulkan offers them."
)


def _gpu_spin(name: str, tooltip: str) -> QSpinBox:
    spin = QSpinBox()
    spin.setObjectName(name)
    spin.setRange(-1, 999)
    spin.setSpecialValueText("all")
    spin.setPrefix("GPU layers ")
    spin.setToolTip(tooltip)
    spin.setAccessibleName(tooltip)
    return spin


class ModelBar(QWidget):
    """Pick the models; a change asks the window to (re)load them.

    Signals:
        load_requested(): the target, the draft or a GPU-layers value changed.
        file_opened(str): a GGUF file was chosen through "Open GGUF…" or ``use_file`` (for the
            recent list).
        library_requested(): "Model library…" was picked in a picker.
    """

    load_requested = Signal()
    file_opened = Signal(str)
    library_requested = Signal()

    def __init__(self, default_label: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._default_label = default_label
        self._recent: list[str] = []
        self._updating = False
        self._current = ("", "")
        self._loading_text = ""
        layout = FlowLayout(self)  # one row when wide, wrapped lines when narrow
        layout.setContentsMargins(6, 4, 6, 4)
        self.target_picker = self._picker("targetPicker", "Target model")
        self.draft_picker = self._picker("draftPicker", "Draft model")
        self.target_gpu = _gpu_spin("targetGpuLayers", GPU_TIPS[0])
        self.draft_gpu = _gpu_spin("draftGpuLayers", GPU_TIPS[1])
        self.badge = ElidedLabel()
        self.badge.setObjectName("compatBadge")
        self.badge.setAccessibleName("Draft compatibility")
        self.progress = QProgressBar()
        self.progress.setObjectName("loadProgress")
        self.progress.setRange(0, 100)
        self.progress.setMaximumWidth(120)
        self.progress.setTextVisible(False)  # the status label next to it says "… 42%"
        self.progress.setAccessibleName("Model loading progress")
        self.progress.hide()
        self.status = ElidedLabel(min_chars=14)
        self.status.setObjectName("loadStatus")
        groups: tuple[tuple[tuple[str | None, QWidget], ...], ...] = (  # each stays on one line
            (("Target", self.target_picker), (None, self.target_gpu)),
            (("Draft", self.draft_picker), (None, self.draft_gpu)),
            ((None, self.badge),),
            ((None, self.progress), (None, self.status)),
        )
        for group in groups:
            holder = QWidget()
            row = QHBoxLayout(holder)
            row.setContentsMargins(0, 0, 0, 0)
            for caption, widget in group:
                if caption:
                    tag = QLabel(caption)
                    tag.setBuddy(widget)
                    row.addWidget(tag)
                row.addWidget(widget)
            layout.addWidget(holder)
        self.target_picker.activated.connect(lambda _i: self._picked(self.target_picker))
        self.draft_picker.activated.connect(lambda _i: self._picked(self.draft_picker))
        self.target_gpu.editingFinished.connect(self.load_requested.emit)
        self.draft_gpu.editingFinished.connect(self.load_requested.emit)
        self.show_paths()

    def _picker(self, name: str, accessible: str) -> QComboBox:
        box = QComboBox()
        box.setObjectName(name)
        box.setAccessibleName(accessible)
        box.setMinimumContentsLength(16)  # longer names are elided (the tooltip has the path)
        box.setPlaceholderText(CHOOSE_MODEL if name == "targetPicker" else "")
        box.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        return box

    def set_gpu_backend(self, backend: str, has_gpu: bool, workers: bool = False) -> None:
        """GPU layers shown only where they mean something: a GPU backend, or (the target's)
        workers to hold layers; else hidden and disabled (a greyed "all" would read as all layers
        on a GPU), their tooltip saying why for whoever reaches them."""
        for spin, tip in zip((self.target_gpu, self.draft_gpu), GPU_TIPS, strict=True):
            usable = has_gpu or (workers and spin is self.target_gpu)
            spin.setEnabled(usable)
            spin.setVisible(usable)
            spin.setToolTip(plain_tip(tip if usable else NO_GPU_TIP.format(backend=backend)))

    # ------------------------------------------------------------------ contents
    def set_recent(self, paths: list[str]) -> None:
        self._recent = list(paths)
        self.show_paths(*self._current)

    def show_paths(self, target: str = "", draft: str = "") -> None:
        """Fill both pickers (built-in / none, the chosen file, recent files, "Model library…",
        "Open GGUF…") and select."""
        self._current = (target, draft)
        self._updating = True
        for box, first in ((self.target_picker, self._default_label), (self.draft_picker, "No draft model")):
            chosen = target if box is self.target_picker else draft
            box.clear()
            box.addItem(first, "")
            for path in [chosen, *self._recent]:
                if path and box.findData(path) < 0:
                    box.addItem(Path(path).name, path)
                    box.setItemData(box.count() - 1, path, Qt.ItemDataRole.ToolTipRole)
            box.insertSeparator(box.count())
            box.addItem("Model library…", OPEN_LIBRARY)
            box.addItem("Open GGUF…", OPEN_FILE)
            box.setCurrentIndex(max(0, box.findData(chosen)))
        self._updating = False

    def show_nothing_loaded(self, offer: str = "") -> None:
        """No target is loaded: the target picker says "Choose a model" (still offering ``offer``,
        a file that is fine; the draft picker keeps its choice)."""
        self.show_paths(offer, self._current[1])
        self.target_picker.setCurrentIndex(-1)

    def has_target(self) -> bool:
        """Whether the target picker names a model (not "Choose a model")."""
        return self.target_picker.currentIndex() >= 0

    def target_path(self) -> str:
        """ "" means the embedded default model."""
        return str(self.target_picker.currentData() or "")

    def draft_path(self) -> str:
        return str(self.draft_picker.currentData() or "")

    def choose_target(self, path: str) -> None:
        """Select ``path`` ("" for the default model) and ask for a reload."""
        self.show_paths(path, self.draft_path())
        self.load_requested.emit()

    def choose_draft(self, path: str) -> None:
        """Select ``path`` ("" for none) and ask for a reload (the side panel's speculation
        control offers the draft's drafter once it is loaded)."""
        self.show_paths(self.target_path(), path)
        self.load_requested.emit()

    def use_file(self, path: str, as_draft: bool = False) -> None:
        """Load a chosen GGUF file as the target (or draft) and add it to the recent files."""
        self.file_opened.emit(path)
        (self.choose_draft if as_draft else self.choose_target)(path)

    def _picked(self, box: QComboBox) -> None:
        if self._updating:
            return
        if box.currentData() == OPEN_LIBRARY:
            self.show_paths(*self._current)  # the library loads what the user picks there
            self.library_requested.emit()
            return
        if box.currentData() == OPEN_FILE:
            path = ask_open_file(self, "Open GGUF model", MODELS, "GGUF models (*.gguf);;All files (*)")
            if not path:
                self.show_paths(*self._current)  # cancelled: back to what was selected
                return
            self.use_file(path, as_draft=box is self.draft_picker)
            return
        if box is self.draft_picker:
            self.choose_draft(self.draft_path())
        else:
            self._current = (self.target_path(), self.draft_path())
            self.load_requested.emit()

    # ------------------------------------------------------------------ state
    def set_loading(self, text: str) -> None:
        """A busy bar until :meth:`set_load_fraction` says how far the loader got."""
        self._loading_text = text
        self.progress.setRange(0, 0)
        self.progress.show()
        self.status.setText(text)
        self.target_picker.setEnabled(False)
        self.draft_picker.setEnabled(False)

    def set_load_fraction(self, fraction: float) -> None:
        """The current stage is ``fraction`` (0..1) loaded: a 0-100 % bar and "Loading x… 42%"."""
        percent = round(min(1.0, max(0.0, fraction)) * 100)
        self.progress.setRange(0, 100)
        self.progress.setValue(percent)
        self.status.setText(f"{self._loading_text} {percent}%")

    def set_idle(self, text: str) -> None:
        self.progress.hide()
        self.progress.setRange(0, 100)
        self.progress.reset()
        self.status.setText(text)
        self.target_picker.setEnabled(True)
        self.draft_picker.setEnabled(True)

    def set_compatibility(self, compatible: bool | None, reason: str = "") -> None:
        """None: no draft chosen. The badge's tooltip and accessible description carry the reason."""
        if compatible is None:
            self.badge.setText("")
            described = ""
        elif compatible:
            self.badge.setText("✓ draft fits")
            described = reason or "The draft shares the target's vocabulary"
        else:
            self.badge.setText(f"✗ draft incompatible: {reason}")
            described = reason
        self.badge.setToolTip(plain_tip(described))
        self.badge.setAccessibleDescription(described)  # as written: a screen reader reads no markup
