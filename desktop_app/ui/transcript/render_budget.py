"""How much of a message the transcript renders: its text up to a cost budget, the rest one click
away (docs/window-speed.md, "Long text").

Qt lays rich text out line by line and cell by cell, several times for one label, so what a text
costs to show depends on what it holds more than on its length: a line of highlighted code costs
about what 400 characters of prose do, a table cell what 200 do. The cost of each line of a message
is estimated from its length, whether it lies in a fenced code block, and its table cells (its
``|``), at the rates measured on the 2-core test machine; the message is rendered up to the line
where the estimate passes :data:`RENDER_BUDGET_MS`. A cut inside a code block shows its first
lines, inside a table its first rows.
"""

from __future__ import annotations

from dataclasses import dataclass

from desktop_app.ui.transcript.markdown_html import fence_code
from desktop_app.ui.transcript.open_fence import closes_fence, fence_marker

# The GUI time a message's render may take, its layout included: a finished answer, a stored
# message opening (one slice of the transcript's lazy rendering) and a refresh of a streaming one
# stay within it (~100 ms: a stall under that reads as instant).
RENDER_BUDGET_MS = 100
# The rates, measured on the 2-core test machine (docs/window-speed.md; `QT_QPA_PLATFORM=offscreen
# .venv/bin/python -m tests.ui.render_rates`): render, layout and paint of a finished message of
# about 20,000 characters in an 800x600 transcript, thread time, best of 3; each rate the one with
# which the estimate gives the times measured.
CHAR_US = 1  # per character of text: 19,964 characters in paragraphs, 26 ms
LINE_US = 60  # per line of text: a list of 480 items (20,530 characters), 47-48 ms
CODE_LINE_US = 30  # per line of a code block: 3,335 lines of "x = 1", 271-283 ms
CODE_CHAR_US = 9  # per character of code, highlighted: 508 lines of Python (20,212 characters), 198-199 ms
CELL_US = 210  # per "|" of a table: 300 rows of 3 cells (1,208 "|"), 274-282 ms


@dataclass(frozen=True)
class Cut:
    """Where a text's render ends (``at``: all of it is ``len(text)``) and, when that is inside a
    fenced code block, where the block's opening line begins (``fence``; else -1)."""

    at: int
    fence: int = -1


def line_cost_us(line: str, in_code: bool) -> int:
    """The estimated cost of showing ``line`` (its line break included), in microseconds."""
    if in_code:
        return CODE_LINE_US + CODE_CHAR_US * len(line)
    return LINE_US + CHAR_US * len(line) + CELL_US * line.count("|")


def render_cut(text: str) -> Cut:
    """Where the render of ``text`` ends: at the start of the line whose estimated cost passes
    :data:`RENDER_BUDGET_MS` (inside it when that line alone costs more: one huge line). Reads the
    text up to the cut, never more."""
    budget = RENDER_BUDGET_MS * 1000
    spent, pos, size = 0.0, 0, len(text)
    marker: str | None = None  # of the fenced code block the line is in
    fence = -1
    while pos < size:
        end = text.find("\n", pos)
        end = size if end < 0 else end + 1
        line = text[pos:end]
        cost = line_cost_us(line, marker is not None)
        if spent + cost > budget:
            if cost > budget:  # one line over the whole budget: as much of it as fits
                per_char = CODE_CHAR_US if marker is not None else CHAR_US
                pos += max(0, int((budget - spent) // per_char))
            return Cut(pos, fence if marker is not None else -1)
        spent += cost
        if marker is None:
            marker = fence_marker(line)
            fence = pos if marker is not None else -1
        elif closes_fence(line.rstrip("\n"), marker):
            marker = None
        pos = end
    return Cut(size)


def cut_fence_code(text: str, cut: Cut) -> str | None:
    """The whole code of the fenced code block ``cut`` falls in (its render shows its first
    lines), as its Copy link copies it; None where the cut is not inside one."""
    if cut.fence < 0 or cut.at >= len(text):
        return None
    body = text.find("\n", cut.fence) + 1
    opener = text[cut.fence : body]
    marker = fence_marker(opener)
    if not body or marker is None:
        return None
    pos = text.rfind("\n", 0, cut.at) + 1
    while pos < len(text):
        end = text.find("\n", pos)
        end = len(text) if end < 0 else end
        if pos >= body and closes_fence(text[pos:end], marker):
            break
        pos = end + 1
    code, _ = fence_code(opener, text[body : min(pos, len(text))])
    return code.removesuffix("\n")


def show_all_label(text: str) -> str:
    """What the link to a cut message's whole text reads: "Show all (26,214 lines)"."""
    lines = text.count("\n") + (not text.endswith("\n"))
    return f"Show all ({lines:,} lines)" if lines > 1 else f"Show all ({len(text):,} characters)"
