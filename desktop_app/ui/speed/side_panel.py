"""The right-hand panel: the speculation control, live speed, acceptance, sparkline, race, answer settings."""

from __future__ import annotations

from PySide6.QtCore import QEvent, Qt
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFormLayout,
    QLabel,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from desktop_app.bench.race import RaceResult
from desktop_app.engine.api import DRAFT_K, MAX_TOKENS, TEMPERATURE, SpecMode
from desktop_app.engine.stats import GenerationStats
from desktop_app.ui.speed.speed_gauge import AcceptanceMeter, Sparkline, SpeedGauge
from desktop_app.ui.transcript.drafter_tints import legend_html
from desktop_app.ui.transcript.message_format import footer_details, format_footer, tooltip_html
from desktop_app.ui.widgets.elided_label import ElidedButton


class SidePanel(QWidget):
    """Holds the speed widgets and the per-answer controls; the window reads and wires them."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        self.mode = QComboBox()  # Off, Auto or one drafter (ui/speed/speculation_choice.py fills it)
        self.mode.setObjectName("speculationMode")
        self.mode.setAccessibleName("Speculation: off, auto or one drafter")
        self.always = QCheckBox("Always draft this many")
        self.always.setObjectName("alwaysDraftK")
        self.always.setToolTip(SpecMode.ON.description)
        self.draft_max = QSpinBox()
        self.draft_max.setObjectName("draftMax")
        self.draft_max.setRange(DRAFT_K.low, DRAFT_K.high)
        self.draft_max.setSuffix(" tokens")
        self.draft_max.setToolTip(DRAFT_K.description)
        self.draft_max.setAccessibleName("Most tokens drafted at a time")
        self.choice_note = QLabel()  # why the chosen drafter is not in use
        self.choice_note.setObjectName("speculationNote")
        self.choice_note.setWordWrap(True)
        self.choice_note.setTextFormat(Qt.TextFormat.PlainText)
        form = QFormLayout()
        form.addRow("Speculation", self.mode)
        form.addRow("Guess up to", self.draft_max)
        form.addRow(self.always)  # its own row: a narrow panel keeps the width of a label and a box
        layout.addLayout(form)
        layout.addWidget(self.choice_note)
        self.gauge = SpeedGauge()
        layout.addWidget(self.gauge, 2)
        self.acceptance = AcceptanceMeter()
        layout.addWidget(self.acceptance)
        self.sparkline = Sparkline()
        layout.addWidget(self.sparkline)
        self.detail = QLabel()  # the last answer in words; the exact figures in its tooltip
        self.detail.setObjectName("speedDetail")
        self.detail.setWordWrap(True)
        self.detail.setTextFormat(Qt.TextFormat.PlainText)
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
        self.race = ElidedButton("Race: without speculation vs your choice")  # a narrow panel elides it
        self.race.setObjectName("raceButton")
        self.race.setAccessibleName("Rerun the last prompt without speculation and with your choice, in turns")
        self.race.setToolTip(self.race.accessibleName())
        layout.addWidget(self.race)
        self.race_verdict = QLabel()  # the last race's measured speed-up
        self.race_verdict.setObjectName("raceVerdict")
        self.race_verdict.setWordWrap(True)
        self.race_verdict.setTextFormat(Qt.TextFormat.PlainText)
        layout.addWidget(self.race_verdict)
        settings = QFormLayout()
        self.temperature = QDoubleSpinBox()
        self.temperature.setObjectName("temperature")
        self.temperature.setRange(TEMPERATURE.low, TEMPERATURE.high)
        self.temperature.setSingleStep(0.1)
        self.temperature.setAccessibleName("Temperature")
        self.max_tokens = QSpinBox()
        self.max_tokens.setObjectName("maxTokens")
        self.max_tokens.setRange(MAX_TOKENS.low, MAX_TOKENS.high)
        self.max_tokens.setAccessibleName("Longest answer in tokens")
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

    def show_live(self, stats: GenerationStats) -> None:
        """Live figures while an answer streams: the dial's figure is its footer's, and the
        words under the sparkline are its footer's too."""
        self.gauge.set_caption("live")
        self.gauge.set_value(stats.answer_tokens_per_s)
        self.sparkline.add(self.gauge.value())
        self._show_acceptance(stats)
        self._show_words(stats)

    def show_final(self, stats: GenerationStats) -> None:
        """The last answer's figures, shown while idle."""
        self.gauge.set_caption("last answer")
        self.gauge.add_answer(stats.answer_tokens_per_s)
        self.sparkline.add(self.gauge.value())
        self._show_acceptance(stats)
        self._show_words(stats)

    def reset_speed(self) -> None:
        """Another model: the dial forgets the last answers (and their scale), the words go."""
        self.gauge.reset()
        self.detail.setText("")
        self.detail.setToolTip("")

    def _show_words(self, stats: GenerationStats) -> None:
        data = stats.to_dict()
        self.detail.setText(format_footer(data))
        self.detail.setToolTip(tooltip_html(footer_details(data)))

    def show_race(self, result: RaceResult) -> None:
        """The last race's measured speed-up (the gauge keeps the chat's last answer)."""
        self.race_verdict.setText(result.verdict())

    def _show_acceptance(self, stats: GenerationStats) -> None:
        self.acceptance.set_active(bool(stats.drafted))
        self.acceptance.set_rate(stats.acceptance_rate)
