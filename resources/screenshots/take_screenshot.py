"""Regenerate resources/screenshots/: the real app with the built-in model, in a throwaway SPECCHAT_HOME.

- chat.png: a conversation with a thinking block, code, `<tags>` shown as text, and a live answer
  with speculation tints and its footer;
- settings.png: the Preferences window; library.png: the model library's catalog;
- race.png: a race of speculation against plain decoding; small.png: the window at 800x600.

Run under Xvfb: ``xvfb-run -a -s "-screen 0 1400x1050x24" .venv/bin/python resources/screenshots/take_screenshot.py``
(an argument names another folder to write into, to look without touching the repo).
"""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

OUT = Path(__file__).resolve().parent
QUESTION = "In Java, what does List<String> mean? Show a check that a < b && c > d."
# A stored earlier turn in the shape a thinking model answers (the built-in demo model does not
# think): its reasoning shows folded, its code highlighted, its <tags> as text.
THOUGHTFUL = (
    "<think>\nThe user asks about generics: List<String> is a list whose elements are Strings. "
    "A short example and the comparison they asked for will do.\n</think>\n\n"
    "`List<String>` is a **list of strings**: the `<String>` part is a type argument, so the "
    "compiler only lets you add `String` values.\n\n"
    '```java\nList<String> names = new ArrayList<>();\nnames.add("Ada");\n'
    "if (a < b && c > d) {\n    System.out.println(names.get(0));\n}\n```\n"
)
PROMPT = (
    "Here is a function:\n\n```python\ndef add(a, b):\n    return a + b\n```\n\n"
    "Rewrite it with type hints and a docstring."
)


def main() -> int:
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else OUT
    out.mkdir(parents=True, exist_ok=True)
    os.environ["SPECCHAT_HOME"] = tempfile.mkdtemp(prefix="specchat-shot-")
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication, QWidget

    from desktop_app.store import History, Settings
    from desktop_app.ui.main_window import MainWindow

    app = QApplication(sys.argv[:1])
    settings = Settings.load()
    settings.set("drafter", "ngram")
    settings.set("spec_mode", "on")
    settings.set("max_tokens", 160)
    settings.set("side_panel", "shown")
    settings.set("welcome_dismissed", True)
    settings.save()
    history = History()
    conversation = history.create_conversation("Java generics")
    history.add_message(conversation.id, "user", QUESTION)
    history.add_message(conversation.id, "assistant", THOUGHTFUL)
    settings = Settings.load()
    settings.set("last_conversation", conversation.id)
    settings.save()
    window = MainWindow(Settings.load(), history)
    window.resize(1360, 1000)
    window.show()

    def save(widget: QWidget, name: str) -> None:
        widget.grab().save(str(out / name))
        print(f"saved {out / name}")

    steps: list[Callable[[], None]] = []

    def next_step(delay_ms: int = 600) -> None:
        if steps:
            QTimer.singleShot(delay_ms, steps.pop(0))
        else:
            window.close()
            app.quit()

    def ask() -> None:
        window.send(PROMPT)

    def chat_done() -> None:
        window.chat_view.messages[1].content.toggle.setChecked(True)  # open the thinking block
        QTimer.singleShot(600, lambda: window.chat_view.verticalScrollBar().setValue(0))  # from the question on
        QTimer.singleShot(1200, lambda: (save(window, "chat.png"), next_step()))

    def settings_shot() -> None:
        dialog = window.preferences.open()
        QTimer.singleShot(500, lambda: (save(dialog, "settings.png"), dialog.reject(), next_step()))

    def library_shot() -> None:
        window.loader.open_library()
        library = window.library
        assert library is not None
        library.tabs.setCurrentWidget(library.catalog_tab)  # what fits this machine, searchable
        QTimer.singleShot(1500, lambda: (save(library, "library.png"), library.close(), next_step()))

    def race_shot() -> None:
        window.settings.set("max_tokens", 48)
        window.start_race()
        dialog = window.race_dialog
        assert dialog is not None
        dialog.race_finished.connect(
            lambda _r: QTimer.singleShot(500, lambda: (save(dialog, "race.png"), dialog.close(), next_step()))
        )

    def small_shot() -> None:
        window.side_fold.action.setChecked(False)  # as a narrow screen starts: the speed panel folded (F9)
        window.resize(800, 600)
        QTimer.singleShot(800, lambda: (save(window, "small.png"), next_step()))

    steps += [ask, settings_shot, library_shot, race_shot, small_shot]
    window.session.busy_changed.connect(lambda busy: busy or (steps and steps[0] is settings_shot and chat_done()))
    window.client.model_loaded.connect(lambda _info: next_step(800) if steps and steps[0] is ask else None)
    window.start()
    QTimer.singleShot(300_000, app.quit)
    return app.exec()


if __name__ == "__main__":
    raise SystemExit(main())
