"""Take resources/screenshots/chat.png: the real app, default model, speculation on, after a chat.

Run under Xvfb (``xvfb-run -s "-screen 0 1400x900x24" .venv/bin/python resources/screenshots/take_screenshot.py``)
or with QT_QPA_PLATFORM=offscreen. User data goes to a temporary SPECCHAT_HOME. A path given as the
first argument is written instead of chat.png (to look at the window without touching the repo).
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

PROMPT = (
    "Here is a function:\n\n```python\ndef add(a, b):\n    return a + b\n```\n\n"
    "Rewrite it with type hints and a docstring."
)
FOLLOW_UP = "Now write a test for it with pytest."
OUT = Path(__file__).resolve().parent / "chat.png"


def main() -> int:
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else OUT
    os.environ["SPECCHAT_HOME"] = tempfile.mkdtemp(prefix="specchat-shot-")
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication

    from desktop_app.store import History, Settings
    from desktop_app.ui.main_window import MainWindow

    app = QApplication(sys.argv[:1])
    settings = Settings.load()
    settings.set("drafter", "ngram")
    settings.set("spec_mode", "on")
    settings.set("max_tokens", 220)
    settings.save()
    window = MainWindow(Settings.load(), History())
    window.resize(1360, 820)
    window.show()

    def shoot() -> None:
        window.grab().save(str(out))
        print(f"saved {out}")
        window.close()
        app.quit()

    prompts = [PROMPT, FOLLOW_UP]

    def next_prompt() -> None:
        if prompts:
            window.send(prompts.pop(0))
        else:
            QTimer.singleShot(1200, shoot)

    window.client.model_loaded.connect(lambda _info: QTimer.singleShot(300, next_prompt))
    window.session.busy_changed.connect(lambda busy: busy or QTimer.singleShot(300, next_prompt))  # answered
    window.start()
    QTimer.singleShot(120_000, app.quit)
    return app.exec()


if __name__ == "__main__":
    raise SystemExit(main())
