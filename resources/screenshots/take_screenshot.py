"""Regenerate resources/screenshots/: the real app with the built-in model, in a throwaway SPECCHAT_HOME.

- chat.png: a conversation with a thinking block, code, `<tags>` shown as text, and a live answer
  drafted by "Repeats from this chat", the speed panel reading it;
- settings.png: the Preferences window; library.png: the model library's catalog, with its
  "Speed here" column;
- hub.png: the library's Hugging Face tab against a fake hub on 127.0.0.1 (tests/library/hub_server.py):
  a repository's quantizations with size, fit and speed, the suggested one selected;
- race.png: a race of speculation against plain decoding;
- presets.png: a conversation's Settings… dialog with a preset just saved;
- find.png: a conversation with math, a block quote and code, the find bar open ("n of m", marks);
- api.png: Models → API requests… after a few requests to the window's API (one refused);
- small.png: the window at 800x600; dark.png: the math conversation in the Dark theme.

Run under Xvfb: ``xvfb-run -a -s "-screen 0 1400x1050x24" .venv/bin/python resources/screenshots/take_screenshot.py``
(an argument names another folder to write into, to look without touching the repo).
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

OUT = Path(__file__).resolve().parent
sys.path.insert(0, str(OUT.parents[1]))  # the repository: its tests' fake hub

from shot_scenes import (  # noqa: E402 - beside this script, imported after the path
    FIND_TEXT,
    HUB_REPO,
    fill_hub,
    free_port,
    math_messages,
    send_api_requests,
)

from tests.library.hub_server import FakeHub  # noqa: E402

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
SYSTEM_PROMPTS = {"Brief": "Answer in two or three sentences.", "Reviewer": "Review the code you are shown."}


def main() -> int:
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else OUT
    out.mkdir(parents=True, exist_ok=True)
    os.environ["SPECCHAT_HOME"] = tempfile.mkdtemp(prefix="specchat-shot-")
    hub = FakeHub().start()
    fill_hub(hub)
    os.environ["HF_ENDPOINT"] = hub.endpoint  # the library's Hugging Face tab asks the fake hub
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication, QComboBox, QWidget

    from desktop_app.store import History, Settings
    from desktop_app.ui.engine.api_page import ApiRequestsPage
    from desktop_app.ui.main_window import MainWindow

    app = QApplication(sys.argv[:1])
    settings = Settings.load()
    settings.set("drafter", "ngram")
    settings.set("spec_mode", "on")
    settings.set("max_tokens", 160)
    settings.set("side_panel", "shown")
    settings.set("welcome_dismissed", True)
    settings.set("api_port", free_port())
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
    failures: list[str] = []

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

    def later(delay_ms: int, then: Callable[[], object]) -> None:
        QTimer.singleShot(delay_ms, then)

    def snap(delay_ms: int, widget: QWidget, name: str, done: Callable[[], object] | None = None) -> None:
        """In ``delay_ms`` (the widget settled): save ``widget`` as ``name``, ``done`` (a close), the next step."""

        def go() -> None:
            save(widget, name)
            if done is not None:
                done()
            next_step()

        QTimer.singleShot(delay_ms, go)

    def wait_for(what: str, ready: Callable[[], bool], then: Callable[[], None], limit_s: float = 120) -> None:
        """Poll ``ready`` (the event loop runs meanwhile), then ``then``; past ``limit_s``, give up."""
        deadline = time.monotonic() + limit_s

        def poll() -> None:
            if ready():
                then()
            elif time.monotonic() > deadline:
                failures.append(what)
                print(f"gave up waiting for {what}", file=sys.stderr)
                next_step()
            else:
                QTimer.singleShot(100, poll)

        poll()

    def ask() -> None:
        window.send(PROMPT)

    def chat_done() -> None:
        window.chat_view.messages[1].content.toggle.setChecked(True)  # open the thinking block
        later(600, lambda: window.chat_view.verticalScrollBar().setValue(0))  # from the question on
        snap(1200, window, "chat.png")

    def settings_shot() -> None:
        window.settings.set("system_prompt", "You are a helpful assistant. Answer briefly, with code when it helps.")
        window.settings.set("prompt_presets", SYSTEM_PROMPTS)
        dialog = window.preferences.open()
        snap(500, dialog, "settings.png", dialog.reject)

    def library_shot() -> None:
        window.loader.open_library()
        library = window.library
        assert library is not None
        library.resize(1360, 640)  # the columns that matter whole
        library.tabs.setCurrentWidget(library.catalog_tab)  # what fits this machine, searchable
        snap(1500, library, "library.png")

    def hub_shot() -> None:
        library = window.library
        assert library is not None
        tab = library.hub_tab
        library.tabs.setCurrentWidget(tab)
        library.resize(1240, 780)  # every quantization in sight
        tab.search.setText("Qwen2.5-3B")
        tab.listed.connect(lambda: snap(800, library, "hub.png", library.close))
        tab.searched.connect(lambda: tab.select_repo(HUB_REPO) if tab.repo is None else None)
        tab.run_search()

    def race_shot() -> None:
        window.settings.set("max_tokens", 48)
        window.start_race()
        dialog = window.race_dialog
        assert dialog is not None
        dialog.resize(900, 440)  # the answers are short: less blank under them
        dialog.race_finished.connect(lambda _r: snap(500, dialog, "race.png", race_closed))

    def race_closed() -> None:
        if window.race_dialog is not None:
            window.race_dialog.close()
        window.settings.set("max_tokens", 160)

    def presets_shot() -> None:
        window.prompt_button.set_prompt(SYSTEM_PROMPTS["Reviewer"])
        editor = window.settings_button.edit()
        editor.use_default.setChecked(False)
        editor.temperature.setValue(0.2)
        editor.max_tokens.setValue(400)
        editor.speculation.setCurrentIndex(editor.speculation.findData("auto"))
        editor.save_as("Code review")
        editor.resize(560, editor.sizeHint().height())
        snap(500, editor, "presets.png", editor.accept)  # the open conversation takes the preset

    math_id = history.add_conversation("Variance", math_messages(), {}).id

    def find_shot() -> None:
        window.conversations.refresh()
        window.session.open(math_id)
        wait_for("the math conversation", lambda: window.chat_view.lazy.count == 0, find_open)

    def find_open() -> None:
        find = window.find_in_chat
        find.open()
        find.bar.field.setText(FIND_TEXT)
        find.step(1)  # the second match: "n of m" reads as a walk
        snap(1200, window, "find.png", find.close)

    def api_shot() -> None:
        window.serve_action.trigger()  # Models → Serve API
        window.menus.api_requests.trigger()
        page = window.findChild(ApiRequestsPage)
        assert page is not None
        page.resize(1000, 250)
        statuses: list[int] = []
        send_api_requests(window.settings["api_port"], statuses)
        wait_for(
            "the API requests",
            lambda: len(statuses) == 5 and page.table.rowCount() == 5,
            lambda: snap(800, page, "api.png", api_closed),
        )

    def api_closed() -> None:
        if (page := window.findChild(ApiRequestsPage)) is not None:
            page.close()
        window.serve_action.trigger()  # Serve API off

    def small_shot() -> None:
        window.session.open(conversation.id)
        window.side_fold.action.setChecked(False)  # as a narrow screen starts: the speed panel folded (F9)
        window.resize(800, 600)
        snap(1500, window, "small.png")

    def dark_shot() -> None:
        window.side_fold.action.setChecked(True)
        window.resize(1360, 1000)
        dialog = window.preferences.open()  # Preferences → Appearance → Theme: Dark
        dialog.show_section("Appearance")
        box = dialog.fields["theme"]
        assert isinstance(box, QComboBox)
        box.setCurrentIndex(box.findData("dark"))
        dialog.apply_button.click()
        dialog.accept()
        window.session.open(math_id)
        later(2000, lambda: window.chat_view.verticalScrollBar().setValue(0))  # from the question on
        snap(2800, window, "dark.png")

    steps += [ask, settings_shot, library_shot, hub_shot, race_shot, presets_shot, find_shot, api_shot]
    steps += [small_shot, dark_shot]
    window.session.busy_changed.connect(lambda busy: None if busy or steps[:1] != [settings_shot] else chat_done())
    window.client.model_loaded.connect(lambda _info: next_step(800) if steps and steps[0] is ask else None)
    window.start()

    def too_long() -> None:
        failures.append("the whole run (300 s)")
        app.quit()

    later(300_000, too_long)
    code = app.exec()
    hub.close()
    return 1 if code or failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
