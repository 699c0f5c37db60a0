"""A grouped bar chart of benchmark results, painted with Qt (no plotting dependency)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

COLORS = {"off": "#8a8f98", "best_fixed": "#3b82f6", "auto": "#16a34a"}


def _bar(entry: dict[str, Any], mode: str) -> dict[str, Any]:
    return entry[entry["best_fixed"]] if mode == "best_fixed" else entry[mode]


def draw_chart(summary: dict[str, dict[str, Any]], path: Path, title: str) -> None:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtCore import QRectF, Qt
    from PySide6.QtGui import QColor, QFont, QGuiApplication, QImage, QPainter

    app = QGuiApplication.instance() or QGuiApplication([])  # noqa: F841 - fonts need an app
    width, height = 900, 480
    image = QImage(width, height, QImage.Format.Format_ARGB32)
    image.fill(QColor("white"))
    p = QPainter(image)
    p.setRenderHint(QPainter.RenderHint.Antialiasing)
    p.setFont(QFont("Sans", 13, QFont.Weight.Bold))
    p.drawText(QRectF(0, 8, width, 24), Qt.AlignmentFlag.AlignCenter, f"{title}: decode tokens/s by task")
    left, right, top, bottom = 70, 20, 50, 80
    plot_w, plot_h = width - left - right, height - top - bottom
    values = [_bar(e, m)["median_tokens_per_s"] for e in summary.values() for m in COLORS]
    vmax = max(values + [1.0]) * 1.15
    p.setFont(QFont("Sans", 9))
    for i in range(6):  # grid and axis labels
        v = vmax * i / 5
        y = top + plot_h - plot_h * i / 5
        p.setPen(QColor("#e5e7eb"))
        p.drawLine(left, int(y), width - right, int(y))
        p.setPen(QColor("#374151"))
        p.drawText(QRectF(0, y - 8, left - 8, 16), Qt.AlignmentFlag.AlignRight, f"{v:.0f}")
    groups = list(summary.items())
    group_w = plot_w / max(len(groups), 1)
    bar_w = group_w * 0.8 / len(COLORS)
    for g, (category, entry) in enumerate(groups):
        x0 = left + g * group_w + group_w * 0.1
        for m, (mode, color) in enumerate(COLORS.items()):
            v = _bar(entry, mode)["median_tokens_per_s"]
            h = plot_h * v / vmax
            rect = QRectF(x0 + m * bar_w, top + plot_h - h, bar_w - 3, h)
            p.fillRect(rect, QColor(color))
            p.setPen(QColor("#111827"))
            label = f"{v:.0f}" if mode == "off" else f"{_bar(entry, mode)['speedup_vs_off']:.2f}x"
            p.drawText(QRectF(rect.x() - 6, rect.y() - 16, bar_w + 6, 14), Qt.AlignmentFlag.AlignCenter, label)
        p.drawText(QRectF(x0, top + plot_h + 6, group_w * 0.8, 18), Qt.AlignmentFlag.AlignCenter, category)
    legend = [("off", "speculation off"), ("best_fixed", "best fixed k"), ("auto", "auto")]
    x = left
    for mode, text in legend:
        p.fillRect(QRectF(x, height - 30, 14, 14), QColor(COLORS[mode]))
        p.drawText(QRectF(x + 20, height - 32, 160, 18), Qt.AlignmentFlag.AlignLeft, text)
        x += 180
    p.end()
    path.parent.mkdir(parents=True, exist_ok=True)
    if not image.save(str(path)):
        raise OSError(f"could not write the chart to {path}")
