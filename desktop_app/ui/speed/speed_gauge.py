"""Live speed widgets: a painted tokens/s dial, an acceptance-rate meter and a speed sparkline.

They follow the application palette, so a dark system theme gives a dark gauge.
"""

from __future__ import annotations

import math
from collections import deque

from PySide6.QtCore import Property, QPointF, QRectF, QSize, Qt, QTimer, Signal
from PySide6.QtGui import QColor, QFont, QPainter, QPainterPath, QPalette, QPen
from PySide6.QtWidgets import QSizePolicy, QWidget

from desktop_app.ui.transcript.message_format import speed_text

REFRESH_MS = 200  # 5 repaints a second while the value moves (each takes CPU from the engine)
SWEEP_DEG = 240.0


# The dial's full scales, in tokens/s: it shows the first one at or above the larger of the live
# speed and the recent answers' speeds (RECENT_ANSWERS of them, forgotten when the model changes).
SCALES = (10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000)
RECENT_ANSWERS = 5


def dial_scale(speed: float) -> float:
    """The dial's full scale for ``speed`` tokens/s: the first of SCALES at or above it."""
    return float(next((scale for scale in SCALES if scale >= speed), SCALES[-1]))


class SpeedGauge(QWidget):
    """A tokens/s dial with a numeric readout; the needle eases toward the latest value.

    Qt property ``tokensPerSecond`` (float): the figure shown.
    Signals:
        tokensPerSecondChanged(float): emitted when the figure changes.
    """

    tokensPerSecondChanged = Signal(float)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("speedGauge")
        self.setAccessibleName("Speed gauge, tokens per second")
        self.setMinimumSize(150, 120)
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Preferred)
        self._value = 0.0
        self._shown = 0.0  # the needle, easing toward _value
        self._scale = dial_scale(0.0)
        self.recent: deque[float] = deque(maxlen=RECENT_ANSWERS)  # the last answers' speeds
        self.caption = "idle"
        self.repaints = 0
        self._timer = QTimer(self)
        self._timer.setInterval(REFRESH_MS)
        self._timer.timeout.connect(self._tick)

    def sizeHint(self) -> QSize:
        return QSize(180, 140)

    def _get_tps(self) -> float:
        return self._value

    def value(self) -> float:
        return self._value

    def text(self) -> str:
        """The figure the dial shows, as the answer's footer writes it."""
        return speed_text(self._value)

    def set_value(self, value: float) -> None:
        """Show ``value`` tokens/s (the ``tokensPerSecond`` property's setter)."""
        self._set_tps(value)

    def scale(self) -> float:
        """The dial's full scale (see SCALES)."""
        return self._scale

    def add_answer(self, value: float) -> None:
        """An answer ended at ``value`` tokens/s: shown, and kept among the recent answers."""
        self.recent.append(max(0.0, float(value)))
        self._set_tps(value)

    def reset(self) -> None:
        """Another model: its recent answers' speeds are forgotten, and the dial is idle at 0."""
        self.recent.clear()
        self.set_caption("idle")
        self._set_tps(0.0)

    def _set_tps(self, value: float) -> None:
        value = max(0.0, float(value))
        scale = dial_scale(max([value, *self.recent]))
        if scale != self._scale:
            self._scale = scale
            self.update()
        if value == self._value:
            return
        self._value = value
        self.setAccessibleDescription(f"{value:.1f} tokens per second")
        if not self._timer.isActive():
            self._timer.start()
        self.tokensPerSecondChanged.emit(value)

    tokensPerSecond = Property(float, _get_tps, _set_tps, notify=tokensPerSecondChanged)

    def set_caption(self, text: str) -> None:
        self.caption = text
        self.update()

    def moving(self) -> bool:
        """Whether the needle is still on its way to the value (the dial repaints meanwhile)."""
        return self._timer.isActive()

    def _tick(self) -> None:
        """The needle's next step toward the value; the timer stops once it is there (a repaint
        that shows nothing new would only take CPU from the engine)."""
        self._shown += (self._value - self._shown) * 0.5
        if abs(self._shown - self._value) < 0.05:
            self._shown = self._value
        self.repaints += 1
        if self._shown == self._value:
            self._timer.stop()
        self.update()

    def paintEvent(self, event: object) -> None:  # noqa: N802 - Qt API
        pal = self.palette()
        p = QPainter(self)
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        # the drawing reaches 0.94 x side below its top (the figure, the unit and the caption
        # under the hub): the whole dial fits the widget's height as well as its width
        side = min(self.width() - 12, (self.height() - 10) / 0.94)
        rect = QRectF((self.width() - side) / 2, 6, side, side)
        track = QPen(pal.color(QPalette.ColorRole.Mid), max(6.0, side / 14))
        track.setCapStyle(Qt.PenCapStyle.RoundCap)
        p.setPen(track)
        start = 90 + SWEEP_DEG / 2  # Qt angles: counter-clockwise from 3 o'clock
        p.drawArc(rect, int(start * 16), int(-SWEEP_DEG * 16))
        frac = min(1.0, self._shown / self._scale) if self._scale else 0.0
        arc = QPen(pal.color(QPalette.ColorRole.Highlight), track.widthF())
        arc.setCapStyle(Qt.PenCapStyle.RoundCap)
        p.setPen(arc)
        if frac > 0:
            p.drawArc(rect, int(start * 16), int(-SWEEP_DEG * frac * 16))
        # needle
        angle = math.radians(start - SWEEP_DEG * frac)
        centre = rect.center()
        radius = side / 2 - track.widthF()
        tip = QPointF(centre.x() + radius * math.cos(angle), centre.y() - radius * math.sin(angle))
        p.setPen(QPen(pal.color(QPalette.ColorRole.WindowText), 2))
        p.drawLine(centre, tip)
        p.setBrush(pal.color(QPalette.ColorRole.WindowText))
        p.drawEllipse(centre, side / 40, side / 40)  # the needle's hub
        # readout: the figure in the middle, the unit and state under it, the scale at the arc's ends
        font = QFont(self.font())
        font.setPointSizeF(max(9.0, side / 8))
        font.setBold(True)
        p.setFont(font)
        # below the hub, in the gauge's open bottom, so the needle never crosses the figure
        value_rect = QRectF(rect.left(), centre.y() + side * 0.06, rect.width(), side * 0.2)
        p.drawText(value_rect, Qt.AlignmentFlag.AlignCenter, speed_text(self._value))
        small = QFont(self.font())
        small.setPointSizeF(max(7.0, side / 18))
        p.setFont(small)
        p.setPen(pal.color(QPalette.ColorRole.PlaceholderText))
        line = side * 0.09
        p.drawText(QRectF(rect.left(), value_rect.bottom(), rect.width(), line), Qt.AlignmentFlag.AlignCenter, "tok/s")
        p.drawText(
            QRectF(rect.left(), value_rect.bottom() + line, rect.width(), line),
            Qt.AlignmentFlag.AlignCenter,
            self.caption,
        )
        end_y = centre.y() + radius * math.sin(math.radians(SWEEP_DEG / 2 - 90)) + track.widthF()
        end_dx = radius * math.cos(math.radians(SWEEP_DEG / 2 - 90))
        for x, label in ((centre.x() - end_dx, "0"), (centre.x() + end_dx, f"{self._scale:g}")):
            p.drawText(QRectF(x - side * 0.12, end_y, side * 0.24, line), Qt.AlignmentFlag.AlignCenter, label)
        p.end()


class AcceptanceMeter(QWidget):
    """A horizontal bar: the share of drafted tokens the target accepted (0..1), the one
    acceptance figure (GenerationStats.acceptance_rate), in the footer's words.

    Qt property ``acceptanceRate`` (float).
    """

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("acceptanceMeter")
        self.setAccessibleName("Draft acceptance rate")
        self.setMinimumHeight(22)
        self._rate = 0.0
        self._active = False

    def _get_rate(self) -> float:
        return self._rate

    def set_rate(self, value: float) -> None:
        """Show ``value`` (0..1) as the accepted share (the ``acceptanceRate`` property's setter)."""
        self._set_rate(value)

    def _set_rate(self, value: float) -> None:
        self._rate = min(1.0, max(0.0, float(value)))
        self.setAccessibleDescription(f"{self._rate:.0%} of drafted tokens accepted")
        self.update()

    acceptanceRate = Property(float, _get_rate, _set_rate)

    def set_active(self, active: bool) -> None:
        """Inactive (speculation off): the bar says so instead of showing 0 %."""
        self._active = active
        self.update()

    def text(self) -> str:
        return f"{self._rate:.0%} of drafts right" if self._active else "no drafts"

    def paintEvent(self, event: object) -> None:  # noqa: N802 - Qt API
        pal = self.palette()
        p = QPainter(self)
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        r = QRectF(self.rect()).adjusted(1, 1, -1, -1)
        p.setPen(Qt.PenStyle.NoPen)
        p.setBrush(pal.color(QPalette.ColorRole.AlternateBase))
        p.drawRoundedRect(r, 4, 4)
        if self._active and self._rate > 0:
            fill = QColor(pal.color(QPalette.ColorRole.Highlight))
            fill.setAlpha(170)
            p.setBrush(fill)
            p.drawRoundedRect(QRectF(r.left(), r.top(), r.width() * self._rate, r.height()), 4, 4)
        p.setPen(pal.color(QPalette.ColorRole.WindowText))
        p.drawText(r, Qt.AlignmentFlag.AlignCenter, self.text())
        p.end()


class Sparkline(QWidget):
    """Recent tokens/s samples as a line (the last ``capacity`` values)."""

    def __init__(self, capacity: int = 120, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("speedSparkline")
        self.setAccessibleName("Recent speed")
        self.setMinimumHeight(36)
        self.samples: deque[float] = deque(maxlen=capacity)

    def add(self, value: float) -> None:
        self.samples.append(max(0.0, float(value)))
        self.update()

    def paintEvent(self, event: object) -> None:  # noqa: N802 - Qt API
        if len(self.samples) < 2:
            return
        pal = self.palette()
        p = QPainter(self)
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        top = max(self.samples) or 1.0
        w, h = self.width() - 2, self.height() - 4
        step = w / (self.samples.maxlen - 1 if self.samples.maxlen else 1)
        x0 = w - step * (len(self.samples) - 1)
        path = QPainterPath()
        for i, v in enumerate(self.samples):
            pt = QPointF(1 + x0 + i * step, 2 + h - h * v / top)
            path.moveTo(pt) if i == 0 else path.lineTo(pt)
        p.setPen(QPen(pal.color(QPalette.ColorRole.Highlight), 1.5))
        p.drawPath(path)
        p.end()
