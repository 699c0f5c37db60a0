"""The rates of desktop_app/ui/transcript/render_budget.py, measured: ``QT_QPA_PLATFORM=offscreen
.venv/bin/python -m tests.ui.render_rates`` (docs/window-speed.md, "Long text").

Five answers of about 20,000 characters (prose, a list, short code lines, highlighted Python, a
table) are each shown as a finished message (``ChatView.add_message`` and the ``processEvents``
after it, in an 800x600 transcript, the budget lifted, then a paint of the transcript), and the window thread's CPU time taken,
best of 3. The rates are those with which the budget's estimate gives each measured time: the
characters and lines of text from the prose and the list, the lines and characters of code from
the two code blocks, the table's cells from the table; then how much of a 250-line code answer
and of a 100-row table the budget shows with them.
"""

from __future__ import annotations

import time

from PySide6.QtCore import QCoreApplication
from PySide6.QtWidgets import QApplication

from desktop_app.ui.transcript import render_budget
from desktop_app.ui.transcript.chat_view import ChatView
from desktop_app.ui.transcript.open_fence import closes_fence, fence_marker
from tests.ui.sample_answers import code_file

ROUNDS = 3

Counts = tuple[int, int, int, int, int]  # text characters, text lines, code lines, code characters, "|"


def samples() -> dict[str, str]:
    sentence = "The quick brown fox jumps over the lazy dog, and then it rests. "
    paragraph = sentence * 5 + "\n\n"
    return {
        "prose": paragraph * (20_000 // len(paragraph)),
        "list": "".join(f"- item number {i} of the list, a few words\n" for i in range(480)),
        "code x = 1": "```\n" + "x = 1\n" * 3_335 + "```\n",
        "Python": "```python\n" + code_file(508) + "```\n",
        "table": "| id | name | value |\n|---|---|---|\n"
        + "".join(f"| {i} | item {i} | {i * 3.5} |\n" for i in range(300)),
    }


def counts(text: str) -> Counts:
    """What the estimate reads in ``text``, as :func:`render_budget.render_cut` walks it."""
    chars = lines = code_lines = code_chars = cells = 0
    marker: str | None = None
    for line in text.splitlines(keepends=True):
        if marker is not None:
            code_lines, code_chars = code_lines + 1, code_chars + len(line)
            if closes_fence(line.rstrip("\n"), marker):
                marker = None
        else:
            chars, lines, cells = chars + len(line), lines + 1, cells + line.count("|")
            marker = fence_marker(line)
    return chars, lines, code_lines, code_chars, cells


def shown_ms(view: ChatView, text: str) -> float:
    best = float("inf")
    for _ in range(ROUNDS):
        start = time.thread_time()
        message = view.add_message("assistant", text, {"generated_tokens": 1})
        QCoreApplication.sendPostedEvents()
        QCoreApplication.processEvents()
        view.viewport().repaint()  # painted now, what is in sight
        best = min(best, time.thread_time() - start)
        view.clear()
        del message
        QCoreApplication.processEvents()
    return best * 1000


def solve2(a: tuple[float, float], b: tuple[float, float], ms: tuple[float, float]) -> tuple[float, float]:
    """x, y (µs) with a[0]x + a[1]y = ms[0] and b[0]x + b[1]y = ms[1] (ms, in µs)."""
    det = a[0] * b[1] - a[1] * b[0]
    return (ms[0] * b[1] - a[1] * ms[1]) / det, (a[0] * ms[1] - ms[0] * b[0]) / det


def main() -> None:
    app = QApplication.instance() or QApplication([])
    render_budget.RENDER_BUDGET_MS = 10**9  # the whole text
    view = ChatView()
    view.resize(800, 600)
    view.show()
    app.processEvents()
    measured: dict[str, tuple[float, Counts]] = {}
    for name, text in samples().items():
        measured[name] = (shown_ms(view, text) * 1000, counts(text))
        print(f"{name:12} {len(text):6,} characters {measured[name][0] / 1000:6.0f} ms  {measured[name][1]}")
    (us_p, c_p), (us_l, c_l) = measured["prose"], measured["list"]
    char, line = solve2(c_p[:2], c_l[:2], (us_p, us_l))
    (us_x, c_x), (us_y, c_y) = measured["code x = 1"], measured["Python"]
    rest_x, rest_y = us_x - char * c_x[0] - line * c_x[1], us_y - char * c_y[0] - line * c_y[1]
    code_line, code_char = solve2(c_x[2:4], c_y[2:4], (rest_x, rest_y))
    us_t, c_t = measured["table"]
    cell = (us_t - char * c_t[0] - line * c_t[1]) / c_t[4]
    print(
        f"CHAR_US {char:.1f}  LINE_US {line:.1f}  CODE_LINE_US {code_line:.1f}  CODE_CHAR_US {code_char:.1f}  CELL_US {cell:.0f}"
    )
    del app


if __name__ == "__main__":
    main()
