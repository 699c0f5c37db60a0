"""A long fenced code block still open at the end of a streaming message, rendered in parts of
a few lines each, so that an update costs what its last lines cost, not what the whole block does.

A code block is one Markdown block until its closing fence, and small models often answer with
one long block (a whole file). While the fence stays open nothing but a closing fence can end it,
so its finished lines can no longer change: they are cut into parts of about ``part_lines``
lines, each highlighted and rendered once (:func:`code_frame`, as parts of one frame), and an
update renders only the part at the end. The parts are highlighted each on its own: where a
lexer's state runs across a cut (a string over many lines) the colours may differ from the
whole's until the fence closes; then the block is rendered whole, as a render of the whole
text gives it. A cut never falls next to a blank line (a ``<pre>`` drops a line break at its
start or end), so stacked parts show the lines the whole does.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from desktop_app.ui.transcript.markdown_html import Block, CodeStyle, code_frame, fence_code

PART_LINES = 12  # lines of code per part: an update renders up to about twice this many
_OPENER = re.compile(r" {0,3}(`{3,}|~{3,})")
# a closing fence, as markdown-it reads one (in a text without "\r", which it reads as a line
# break: such a text is rendered whole): up to 3 spaces, the opener's marker or a longer one, spaces
_CLOSER = re.compile(r" {0,3}(`{3,}|~{3,})[ \t]*")


@dataclass(frozen=True)
class Parts:
    """An open code block as parts: ``done`` (rendered once; the same objects from update to
    update) and ``end``, the part the last update rendered, whose ``code_blocks`` hold the whole
    block's code so far (its Copy link copies all of it)."""

    done: tuple[Block, ...]
    end: Block


def _closed(block: Block) -> bool:
    """Whether ``block``, a fenced code block, ends with its closing fence."""
    lines = block.source.removesuffix("\n").split("\n")
    opener = _OPENER.match(lines[0])
    return bool(opener and len(lines) > 1 and closes_fence(lines[-1], opener.group(1)))


def fence_marker(line: str) -> str | None:
    """The marker (3 or more backticks or tildes) of ``line`` where it opens a fenced code block."""
    opener = _OPENER.match(line)
    return opener.group(1) if opener else None


def closes_fence(line: str, marker: str) -> bool:
    """Whether ``line`` (no line break) closes a fenced code block opened with ``marker``."""
    closer = _CLOSER.fullmatch(line)
    return bool(closer and closer.group(1).startswith(marker))


def closed_fence(block: Block) -> bool:
    """Whether ``block`` is a fenced code block closed by a finished line: later text cannot
    change it."""
    return block.kind == "fence" and block.source.endswith("\n") and "\r" not in block.source and _closed(block)


class OpenFence:
    """The fenced code block at the end of a streaming text (module docstring), from its start
    (``block``: the block a whole render of the text gave, unclosed); ``index``: its number
    among the message's code blocks. ``parsed_chars``: the Markdown the last update parsed."""

    def __init__(self, block: Block, index: int, style: CodeStyle, copied: int | None, part_lines: int) -> None:
        self.start = block.start
        self._opener = block.source[: block.source.find("\n") + 1]
        self._marker = _OPENER.match(self._opener).group(1)  # type: ignore[union-attr]
        self._index, self._style, self._copied, self._part_lines = index, style, copied, part_lines
        self._done: list[Block] = []
        self._code: list[str] = []  # the code of each part done
        self._end = self.start + len(self._opener)  # where the open part begins
        self._checked = self._end  # the lines before this are known to be code
        self._seen = ""  # the text up to _checked
        self.parsed_chars = 0

    @classmethod
    def of(cls, block: Block, index: int, style: CodeStyle, copied: int | None, part_lines: int) -> OpenFence | None:
        """An open fence for ``block`` if it is a fenced code block, unclosed, long enough to cut."""
        if block.kind != "fence" or "\n" not in block.source or "\r" in block.source or _closed(block):
            return None
        if block.source.count("\n") <= part_lines + 1:
            return None
        return cls(block, index, style, copied, part_lines)

    def update(self, text: str) -> Parts | None:
        """The parts of the block in ``text`` (the last update's text and more); None when a
        line closed it (an unfinished one too: it may stay a closing fence), or the text before
        changed: the caller renders it whole."""
        if not text.startswith(self._seen) or "\r" in text[self._checked :]:
            return None
        last = text.rfind("\n") + 1  # where the unfinished line begins
        if any(closes_fence(line, self._marker) for line in text[self._checked :].split("\n")):
            return None
        self._seen, self._checked = text[:last], max(self._checked, last)
        self.parsed_chars = 0
        lines = text[self._end :].split("\n")  # the open part's lines, the last one unfinished
        while len(lines) > self._part_lines + 1:
            cut = next(
                (i for i in range(self._part_lines, len(lines) - 1) if lines[i - 1].strip() and lines[i].strip()), 0
            )
            if not cut:
                break
            source = "".join(f"{line}\n" for line in lines[:cut])
            self._done.append(self._render(source, self._end, bottom=False))
            self._end += len(source)
            lines = lines[cut:]
        end = self._render(text[self._end :], self._end, bottom=True)
        return Parts(tuple(self._done), end)

    def _render(self, source: str, start: int, bottom: bool) -> Block:
        code, language = fence_code(self._opener, source)
        self.parsed_chars += len(self._opener) + len(source)
        top = not self._done
        html = code_frame(code, language, self._style, self._index, self._copied, top, bottom)
        if top:
            source, start = self._opener + source, self.start
        if not bottom:
            self._code.append(code)
            return Block(source, start, html, (), "fence")
        whole = ("".join(self._code) + code).removesuffix("\n")
        return Block(source, start, html, (whole,), "fence")
