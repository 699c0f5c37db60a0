"""Markdown of a message that grows at its end, rendered so that each update costs what its end
costs, not what the whole message costs.

The rule: Markdown is read line by line, and a top-level block that a later line began after
can no longer change (a later line can only continue the last block, or start a new one). So
of the top-level blocks markdown-it reports, all but the last are *stable*: they are rendered
once and kept, and each update parses and renders only from where the last block begins. Two
cases would break that rule, and are handled:

- An unfinished last line that begins a block may, once finished, continue the block before it
  ("1. a" then "2" is a list and a paragraph; "2. b" makes it one list of two items), so that
  block stays open too until the line ends.
- A link reference definition (``[docs]: https://...``) can change blocks before it. The
  definitions each update sees are compared with those the kept blocks were rendered with;
  when they differ, everything is rendered again (rare in answers: a few updates).

A fenced code block closed by a finished line is stable too (nothing after it can change it);
one still open at the end is, when long, rendered in parts (:class:`OpenFence`), so that an
update inside it renders its last lines, not all of it.

Everything else markdown-it keeps while it renders (the numbering of code blocks for their Copy
links, the colours) is carried over to the part rendered again, so the blocks of an update are
those a render of the whole text gives (tests check it prefix by prefix).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from PySide6.QtGui import QPalette

from desktop_app.ui.transcript.markdown_html import Block, CodeStyle, code_style, markdown_env, render_from
from desktop_app.ui.transcript.open_fence import PART_LINES, OpenFence, closed_fence

Links = dict[str, tuple[str, str]]  # reference label -> (href, title)


def _links(references: dict[str, Any]) -> Links:
    return {label: (ref["href"], ref["title"]) for label, ref in references.items()}


@dataclass(frozen=True)
class Split:
    """One update's blocks: ``stable`` (those later text cannot change; the previous update's
    stable blocks, the same objects, then any new ones, unless ``restarted``) and ``open``; where
    the open block is a long code block, ``parts`` of it before ``open`` (its last part), each
    rendered once (the same objects from update to update while the block stays open)."""

    stable: tuple[Block, ...]
    open: tuple[Block, ...]
    restarted: bool
    parts: tuple[Block, ...] = ()

    @property
    def code_blocks(self) -> tuple[str, ...]:
        return tuple(c for b in (*self.stable, *self.parts, *self.open) for c in b.code_blocks)


class StreamedMarkdown:
    """The rendered blocks of one growing message (module docstring: the rule).

    ``parsed_chars``: how many characters of Markdown the last :meth:`update` handed to the
    parser (the tail, or all of it after a restart). ``part_lines``: the lines of code in each
    part of a long open code block (:class:`OpenFence`)."""

    def __init__(self, part_lines: int = PART_LINES) -> None:
        self._part_lines = part_lines
        self._fence: OpenFence | None = None
        self._key: tuple[CodeStyle, int | None] | None = None
        self._stable: list[Block] = []
        self._stable_text = ""  # the text the stable blocks (and what lies between them) came from
        self._defined: dict[str, Any] = {}  # reference definitions in _stable_text
        self._rendered_with: Links = {}  # those the stable blocks were rendered with
        self.parsed_chars = 0

    def _restart(self, key: tuple[CodeStyle, int | None]) -> None:
        self._key, self._stable, self._stable_text, self._defined, self._rendered_with = key, [], "", {}, {}
        self._fence = None

    def update(self, text: str, palette: QPalette | None = None, copied: int | None = None) -> Split:
        """The blocks of ``text``, which usually is the last update's text and more."""
        style = code_style(palette) if palette is not None else CodeStyle()
        key = (style, copied)
        restarted = key != self._key or not text.startswith(self._stable_text)
        if restarted:
            self._restart(key)
        if self._fence is not None:
            parts = self._fence.update(text)
            if parts is not None:  # still open: no reference definition can come up inside it
                self.parsed_chars = self._fence.parsed_chars
                return Split(tuple(self._stable), (parts.end,), restarted, parts.done)
            self._fence = None  # closed, maybe: render it whole
        start = len(self._stable_text)
        code = [c for b in self._stable for c in b.code_blocks]
        env = markdown_env(style, copied, code, self._defined)
        blocks = render_from(text, start, env)
        self.parsed_chars = len(text) - start
        if start and _links(env["references"]) != self._rendered_with:
            # a definition the kept blocks did not see (or saw otherwise): render them again
            restarted, start = True, 0
            self._restart(key)
            env = markdown_env(style, copied)
            blocks = render_from(text, 0, env)
            self.parsed_chars += len(text)
        if not start:
            self._rendered_with = _links(env["references"])
        keep = len(blocks) - 1
        if keep > 0 and blocks[-1].start >= text.rfind("\n") + 1:
            keep -= 1  # the last block begins on an unfinished line: it may yet join the one before
        elif blocks and closed_fence(blocks[-1]):
            keep += 1
        if keep > 0:
            end = blocks[keep].start if keep < len(blocks) else blocks[-1].start + len(blocks[-1].source)
            self._stable += blocks[:keep]
            # definitions end before the first open block's line, in lines of the text parsed
            open_line = text.count("\n", start, end)
            self._defined = {
                k: r for k, r in env["references"].items() if r["map"][1] <= open_line or k in self._defined
            }
            self._stable_text = text[:end]
            blocks = blocks[keep:]
        if len(blocks) == 1:
            index = len(env["code_blocks"]) - len(blocks[0].code_blocks)
            fence = OpenFence.of(blocks[0], index, style, copied, self._part_lines)
            parts = fence.update(text) if fence is not None else None
            if fence is not None and parts is not None:
                self._fence, self.parsed_chars = fence, self.parsed_chars + fence.parsed_chars
                return Split(tuple(self._stable), (parts.end,), restarted, parts.done)
        return Split(tuple(self._stable), tuple(blocks), restarted)
