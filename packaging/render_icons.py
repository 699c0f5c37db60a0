"""Render resources/icons/specchat.svg to the PNG sizes desktops want (and .ico/.icns sources)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

SIZES = (16, 24, 32, 48, 64, 128, 256, 512)


def main() -> int:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtCore import Qt
    from PySide6.QtGui import QGuiApplication, QImage, QPainter
    from PySide6.QtSvg import QSvgRenderer

    app = QGuiApplication.instance() or QGuiApplication(sys.argv[:1])  # noqa: F841
    icons = Path(__file__).resolve().parents[1] / "resources" / "icons"
    renderer = QSvgRenderer(str(icons / "specchat.svg"))
    if not renderer.isValid():
        print("the SVG icon is invalid", file=sys.stderr)
        return 1
    for size in SIZES:
        image = QImage(size, size, QImage.Format.Format_ARGB32)
        image.fill(Qt.GlobalColor.transparent)
        painter = QPainter(image)
        renderer.render(painter)
        painter.end()
        image.save(str(icons / f"specchat-{size}.png"))
    print(f"wrote {len(SIZES)} PNG icons to {icons}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
