"""The right-hand panel: speculation switch, live speed, acceptance, sparkline, race, answer settings."""

from __future__ import annotations

from typing import Any

from PySide6.QtWidgets import (
    QCheckBox, QComboBox, QDoubleSpinBox, QFormLayout, QLabel, QPushButton, QSpinBox, QVBoxLayout, QWidget,
)

from desktop_app.ui.speed_gauge import AcceptanceMeter, Sparkline, SpeedGauge

MODES = ("Off", "On", "Auto")


class SidePanel(QWidget):
    """Holds the speed widgets and the per-answer controls; the window reads and wires them."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        self.mode = QComboBox()
        self.mode.setObjectName("speculationMode")
        self.mode.setAccessibleName("Speculation mode")
        self.mode.setToolTip("Off: plain decoding. On: always draft. Auto: draft only when it pays on this machine.")
        self.mode.addItems(list(MODES))
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
        self.race = QPushButton("Race: off vs on")
        self.race.setObjectName("raceButton")
        self.race.setAccessibleName("Rerun the last prompt with speculation off and on")
        layout.addWidget(self.race)
        settings = QFormLayout()
        self.draft_max = QSpinBox()
        self.draft_max.setObjectName("draftMax")
        self.draft_max.setRange(1, 32)
        self.draft_max.setAccessibleName("Tokens drafted per cycle")
        self.temperature = QDoubleSpinBox()
        self.temperature.setObjectName("temperature")
        self.temperature.setRange(0.0, 2.0)
        self.temperature.setSingleStep(0.1)
        self.temperature.setAccessibleName("Temperature")
        self.max_tokens = QSpinBox()
        self.max_tokens.setObjectName("maxTokens")
        self.max_tokens.setRange(1, 32768)
        self.max_tokens.setAccessibleName("Longest answer in tokens")
        settings.addRow("Draft k", self.draft_max)
        settings.addRow("Temperature", self.temperature)
        settings.addRow("Max tokens", self.max_tokens)
        layout.addLayout(settings)
        layout.addStretch(1)

    def mode_key(self) -> str:
        return self.mode.currentText().lower()

    def set_mode_key(self, key: str) -> None:
        self.mode.setCurrentText(key.capitalize())

    def show_live(self, stats: dict[str, Any]) -> None:
        """Live figures while an answer streams."""
        self.gauge.set_caption("live")
        self.gauge.tokensPerSecond = float(stats.get("window_tokens_per_s") or 0.0)
        self.sparkline.add(self.gauge.tokensPerSecond)
        self._show_acceptance(stats)

    def show_final(self, stats: dict[str, Any]) -> None:
        """The last answer's figures, shown while idle."""
        tps = float(stats.get("decode_tokens_per_s") or stats.get("window_tokens_per_s") or 0.0)
        self.gauge.set_streaming(False)
        self.gauge.set_caption("last answer")
        self.gauge.tokensPerSecond = tps
        self.sparkline.add(tps)
        self._show_acceptance(stats)
        k = stats.get("draft_max", 0)
        self.detail.setText(
            f"{stats.get('generated_tokens', 0)} tokens in {stats.get('target_passes', 0)} target passes"
            + (f" · k ≤ {k}" if k else "") + (f"\n{stats['auto_reason']}" if stats.get("auto_reason") else "")
        )

    def _show_acceptance(self, stats: dict[str, Any]) -> None:
        self.acceptance.set_active(bool(stats.get("drafted")))
        self.acceptance.acceptanceRate = float(stats.get("acceptance_rate") or 0.0)
