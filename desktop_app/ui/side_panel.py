"""The right-hand panel: speculation switch, live speed, acceptance, sparkline, race, answer settings."""

from __future__ import annotations

from PySide6.QtCore import QEvent, Qt
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFormLayout,
    QLabel,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from desktop_app.engine.api import DRAFT_K, MAX_TOKENS, TEMPERATURE, SpecMode
from desktop_app.engine.stats import GenerationStats
from desktop_app.ui.drafter_tints import legend_html
from desktop_app.ui.speed_gauge import AcceptanceMeter, Sparkline, SpeedGauge


class SidePanel(QWidget):
    """Holds the speed widgets and the per-answer controls; the window reads and wires them."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        self.mode = QComboBox()
        self.mode.setObjectName("speculationMode")
        self.mode.setAccessibleName("Speculation mode")
        self.mode.setToolTip(" ".join(f"{m.label}: {m.description}." for m in SpecMode))
        for mode in SpecMode:
            self.mode.addItem(mode.label, mode.value)
        form = QFormLayout()
        form.addRow("Speculation", self.mode)
        layout.addLayout(form)
        self.gauge = SpeedGauge()
        layout.addWidget(self.gauge, 2)
        self.acceptance = AcceptanceMeter()
        layout.addWidget(self.acceptance)
        self.sparkline = Sparkline()
        layout.addWidget(self.sparkline)
        self.detail = QLabel()
        self.detail.setObjectName("speedDetail")
        self.detail.setWordWrap(True)
        layout.addWidget(self.detail)
        self.highlight = QCheckBox("Highlight draft tokens")
        self.highlight.setObjectName("highlightDrafts")
        self.highlight.setAccessibleName("Tint text that came from accepted draft tokens")
        layout.addWidget(self.highlight)
        self.legend = QLabel()  # each drafter's tint, shown while highlighting is on
        self.legend.setObjectName("drafterLegend")
        self.legend.setAccessibleName("Highlight colour of each drafter")
        self.legend.setTextFormat(Qt.TextFormat.RichText)
        self.legend.setWordWrap(True)
        self.legend.setVisible(False)
        self._show_legend()
        self.highlight.toggled.connect(self.legend.setVisible)
        layout.addWidget(self.legend)
        self.race = QPushButton("Race: off vs on")
        self.race.setObjectName("raceButton")
        self.race.setAccessibleName("Rerun the last prompt with speculation off and on")
        layout.addWidget(self.race)
        settings = QFormLayout()
        self.draft_max = QSpinBox()
        self.draft_max.setObjectName("draftMax")
        self.draft_max.setRange(DRAFT_K.low, DRAFT_K.high)
        self.draft_max.setToolTip(DRAFT_K.description)
        self.draft_max.setAccessibleName("Tokens drafted per cycle")
        self.temperature = QDoubleSpinBox()
        self.temperature.setObjectName("temperature")
        self.temperature.setRange(TEMPERATURE.low, TEMPERATURE.high)
        self.temperature.setSingleStep(0.1)
        self.temperature.setAccessibleName("Temperature")
        self.max_tokens = QSpinBox()
        self.max_tokens.setObjectName("maxTokens")
        self.max_tokens.setRange(MAX_TOKENS.low, MAX_TOKENS.high)
        self.max_tokens.setAccessibleName("Longest answer in tokens")
        settings.addRow("Draft k", self.draft_max)
        settings.addRow("Temperature", self.temperature)
        settings.addRow("Max tokens", self.max_tokens)
        layout.addLayout(settings)
        layout.addStretch(1)

    def _show_legend(self) -> None:
        self.legend.setText(legend_html(self.palette()))

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802 - Qt API
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange:
            self._show_legend()  # the tints follow a light/dark theme switch

    def mode_key(self) -> str:
        return str(self.mode.currentData())

    def set_mode_key(self, key: str) -> None:
        self.mode.setCurrentIndex(max(0, self.mode.findData(SpecMode(key).value)))

    def show_live(self, stats: GenerationStats) -> None:
        """Live figures while an answer streams."""
        self.gauge.set_caption("live")
        self.gauge.set_value(stats.window_tokens_per_s)
        self.sparkline.add(self.gauge.value())
        self._show_acceptance(stats)

    def show_final(self, stats: GenerationStats) -> None:
        """The last answer's figures, shown while idle."""
        tps = stats.decode_tokens_per_s or stats.window_tokens_per_s
        self.gauge.set_streaming(False)
        self.gauge.set_caption("last answer")
        self.gauge.set_value(tps)
        self.sparkline.add(tps)
        self._show_acceptance(stats)
        k = stats.draft_max
        self.detail.setText(
            f"{stats.generated_tokens} tokens in {stats.target_passes} target passes"
            + (f" · k ≤ {k}" if k else "")
            + (f"\n{stats.auto_reason}" if stats.auto_reason else "")
        )

    def _show_acceptance(self, stats: GenerationStats) -> None:
        self.acceptance.set_active(bool(stats.drafted))
        self.acceptance.set_rate(stats.acceptance_rate)
