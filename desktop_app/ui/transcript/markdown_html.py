"""Markdown to HTML for the transcript's rich text, where text is text.

A message is rendered with markdown-it-py from the raw text with raw HTML and character
references off, so every ``<``, ``>`` and ``&`` the text holds is shown as written. Images are
never loaded: an image becomes its alt text and a link. Code blocks are framed, highlighted with
Pygments (inline styles), labelled with their language and carry a Copy link
(``copy-code:N``, N counting the message's code blocks from 0).

The colours of code blocks and tables come from the palette (:func:`code_style`).
Text this renderer adds around the message's own (a code block's language label, its Copy
link, an image's "Image:" prefix) carries the HTML title :data:`CHROME`, so that the draft
tints can tell it from the message's text.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.token import Token
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import get_lexer_by_name
from pygments.util import ClassNotFound
from PySide6.QtGui import QColor, QFontDatabase, QPalette

from desktop_app.ui.transcript.drafter_tints import is_dark
from desktop_app.ui.transcript.latex_math import add_math_rules

COPY_SCHEME = "copy-code:"  # href of a code block's Copy link: copy-code:N
CHROME = "specchat-chrome"  # title of the text the renderer adds (not the message's own)
COPY_LABEL = "Copy"
COPIED_LABEL = "Copied"


@dataclass(frozen=True)
class CodeStyle:
    """Colours ("#rrggbb") of code blocks and tables, and the Pygments style of their code."""

    background: str = "#f6f8fa"
    header: str = "#eaeef2"  # the bar with the language and Copy
    border: str = "#d0d7de"
    label: str = "#57606a"
    pygments_style: str = "default"
    text: str = "#1f2328"  # the message's text: formulas are drawn in it


@dataclass(frozen=True)
class Rendered:
    """A message's HTML and the code of each of its code blocks, in order."""

    html: str
    code_blocks: tuple[str, ...] = field(default_factory=tuple)


LIGHT_CODE = "default"  # Pygments styles for code on a light and on a dark palette
DARK_CODE = "github-dark"


def _mix(a: QColor, b: QColor, share: float) -> str:
    """``share`` of ``b`` over ``a``, as "#rrggbb"."""
    return QColor(
        round(a.red() + (b.red() - a.red()) * share),
        round(a.green() + (b.green() - a.green()) * share),
        round(a.blue() + (b.blue() - a.blue()) * share),
    ).name()


def code_style(palette: QPalette) -> CodeStyle:
    """Code blocks a shade off the palette's base, framed, in a Pygments style for its lightness."""
    base, text = palette.color(QPalette.ColorRole.Base), palette.color(QPalette.ColorRole.Text)
    return CodeStyle(
        background=_mix(base, text, 0.04),
        header=_mix(base, text, 0.09),
        border=_mix(base, text, 0.25),
        label=_mix(base, text, 0.6),
        pygments_style=DARK_CODE if is_dark(palette) else LIGHT_CODE,
        text=text.name(),
    )


def _chrome(text: str, color: str) -> str:
    return f'<span title="{CHROME}" style="color:{color};">{html.escape(text)}</span>'


@lru_cache(maxsize=256)
def highlighted_code(code: str, language: str, style: str) -> str:
    """``code`` as HTML spans with inline colours from the Pygments ``style``; escaped plain
    text when no lexer is known for ``language``."""
    try:
        lexer = get_lexer_by_name(language, stripnl=False, ensurenl=False) if language else None
    except ClassNotFound:
        lexer = None
    if lexer is None:
        return html.escape(code)
    return str(highlight(code, lexer, HtmlFormatter(nowrap=True, noclasses=True, style=style)))


def code_frame(
    code: str, language: str, style: CodeStyle, index: int, copied: int | None, top: bool = True, bottom: bool = True
) -> str:
    """A code block: a frame with a bar (its language and Copy link, ``copy-code:index``) over its
    highlighted ``code``. A part of one (``top`` or ``bottom`` False), to be stacked with the
    other parts in labels of their own, leaves out the bar, or the frame's bottom edge and
    margin: stacked, the parts look as the whole does, pixel for pixel (the whole's frame is its
    table's border and its cell's, 2 px; a part's is its cell's on the sides it has)."""
    body = highlighted_code(
        code.removesuffix("\n"), language, style.pygments_style
    )  # the last line break is not the code's
    bar = ""
    if top:
        copy = COPIED_LABEL if copied == index else COPY_LABEL
        label = _chrome(language or "code", style.label)
        link = f'<a href="{COPY_SCHEME}{index}" title="{CHROME}" style="color:{style.label};">{copy}</a>'
        bar = (
            f'<table width="100%" cellspacing="0" cellpadding="4" style="background-color: {style.header};">'
            f'<tr><td>{label}</td><td align="right">{link}</td></tr></table>'
        )
    pre = f'<pre style="margin: 0px;">{body}</pre>'
    if top and bottom:
        return (
            f'<table width="100%" cellspacing="0" cellpadding="0" style="border: 1px solid {style.border}; '
            f'background-color: {style.background}; margin-top: 4px; margin-bottom: 4px;"><tr><td>{bar}'
            f'<table width="100%" cellspacing="0" cellpadding="6"><tr><td>{pre}'
            "</td></tr></table></td></tr></table>\n"
        )
    sides = ("left", "right", *(("top",) if top else ()), *(("bottom",) if bottom else ()))
    edges = " ".join(f"border-{side}: 2px solid {style.border};" for side in sides)
    pads = f"padding: {6 if top else 0}px 6px {6 if bottom else 0}px 6px;"
    return (
        f'<table width="100%" cellspacing="0" cellpadding="0" style="border-collapse: collapse; '
        f"background-color: {style.background}; margin-top: {4 if top else 0}px; "
        f'margin-bottom: {4 if bottom else 0}px;"><tr><td style="{edges} background-color: {style.background};">'
        f'{bar}<table width="100%" cellspacing="0" cellpadding="0"><tr><td style="{pads}">{pre}'
        "</td></tr></table></td></tr></table>\n"
    )


def _code_block(code: str, language: str, env: dict[str, Any]) -> str:
    blocks: list[str] = env["code_blocks"]
    blocks.append(code.removesuffix("\n"))  # the fence's last line break is not the code's
    return code_frame(code, language, env["style"], len(blocks) - 1, env.get("copied"))


def _fence(self: Any, tokens: Sequence[Token], idx: int, options: Any, env: dict[str, Any]) -> str:
    token = tokens[idx]
    info = token.info.strip().split(maxsplit=1)
    return _code_block(token.content, info[0] if info else "", env)


def _indented_code(self: Any, tokens: Sequence[Token], idx: int, options: Any, env: dict[str, Any]) -> str:
    return _code_block(tokens[idx].content, "", env)


def _image(self: Any, tokens: Sequence[Token], idx: int, options: Any, env: dict[str, Any]) -> str:
    """An image is never loaded: its alt text, as a link to it (opened only on a click)."""
    token = tokens[idx]
    src = str(token.attrGet("src") or "")
    alt = self.renderInlineAsText(token.children or [], options, env) or src
    style: CodeStyle = env["style"]
    return f'{_chrome("Image: ", style.label)}<a href="{html.escape(src)}">{html.escape(alt)}</a>'


def _table_open(self: Any, tokens: Sequence[Token], idx: int, options: Any, env: dict[str, Any]) -> str:
    style: CodeStyle = env["style"]
    return (
        f'<table border="1" cellspacing="0" cellpadding="4" style="border-collapse: collapse; '
        f'border-color: {style.border}; margin-top: 4px; margin-bottom: 4px;">\n'
    )


@lru_cache(maxsize=1)
def _fixed_families() -> str:
    """The system's fixed-pitch font family, then the generic one, as a CSS font-family."""
    family = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont).family().replace("'", "")
    return f"'{family}', monospace" if family else "monospace"


def _code_inline(self: Any, tokens: Sequence[Token], idx: int, options: Any, env: dict[str, Any]) -> str:
    """A code span, in the fixed-pitch font and shaded, set on the span itself (not inherited
    from ``<code>``): in a table cell as in a paragraph."""
    style: CodeStyle = env["style"]
    return (
        f'<code style="font-family: {_fixed_families()}; background-color: {style.header};">'
        f"{html.escape(tokens[idx].content)}</code>"
    )


def _blockquote_open(self: Any, tokens: Sequence[Token], idx: int, options: Any, env: dict[str, Any]) -> str:
    """A block quote with a bar down its left side (Qt's rich text draws no block border: the
    bar is a table cell of its own) and its text in the label colour."""
    style: CodeStyle = env["style"]
    return (
        '<table cellspacing="0" cellpadding="0" style="margin-top: 4px; margin-bottom: 4px;"><tr>'
        f'<td width="4" style="background-color: {style.border};">{_chrome(" ", style.border)}</td>'
        f'<td style="padding-left: 10px; color: {style.label};">\n'
    )


def _blockquote_close(self: Any, tokens: Sequence[Token], idx: int, options: Any, env: dict[str, Any]) -> str:
    return "</td></tr></table>\n"


def _parser() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False, "breaks": True}).enable(["table", "strikethrough"])
    md.disable("entity")  # "&amp;" in a message is shown as written
    md.add_render_rule("fence", _fence)
    md.add_render_rule("code_block", _indented_code)
    md.add_render_rule("image", _image)
    md.add_render_rule("table_open", _table_open)
    md.add_render_rule("code_inline", _code_inline)
    md.add_render_rule("blockquote_open", _blockquote_open)
    md.add_render_rule("blockquote_close", _blockquote_close)
    add_math_rules(md)
    return md


_MD = _parser()


@dataclass(frozen=True)
class Block:
    """A top-level block of a message (a paragraph, a list, a code block, a table...): its
    source, where that starts in the message, its HTML, the code of its code blocks, and its
    kind (the type of its first token: "paragraph_open", "fence"...)."""

    source: str
    start: int
    html: str
    code_blocks: tuple[str, ...]
    kind: str = ""


def markdown_env(
    style: CodeStyle,
    copied: int | None = None,
    code_blocks: Sequence[str] = (),
    references: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """What the renderer keeps while it renders one message: its colours, the code of the code
    blocks before (the next one is numbered after them), the one whose Copy link reads "Copied",
    and the link reference definitions markdown-it found (label -> href, title, lines)."""
    return {"style": style, "code_blocks": list(code_blocks), "copied": copied, "references": dict(references or {})}


def render_from(text: str, start: int, env: dict[str, Any]) -> list[Block]:
    """The top-level blocks of ``text[start:]`` (``start``: where a top-level block begins, or
    0), each with its place in ``text``; ``env`` (:func:`markdown_env`) gains the code of their
    code blocks and the reference definitions found."""
    source = text[start:]
    line_starts = [0]
    line_starts += [i + 1 for i, c in enumerate(source) if c == "\n"]
    line_starts.append(len(source))
    blocks: list[Block] = []
    group: list[Token] = []
    for token in _MD.parse(source, env):
        group.append(token)
        if token.level == 0 and token.nesting <= 0:  # the end of a top-level block
            first, last = group[0].map or [0, 0]
            begin, end = line_starts[min(first, len(line_starts) - 1)], line_starts[min(last, len(line_starts) - 1)]
            before = len(env["code_blocks"])
            html = _MD.renderer.render(group, _MD.options, env)
            code = tuple(env["code_blocks"][before:])
            blocks.append(Block(source[begin:end], start + begin, html, code, group[0].type))
            group = []
    return blocks


def fence_code(opener: str, lines: str) -> tuple[str, str]:
    """The code and the language of ``lines`` in the fenced code block whose first line is
    ``opener``, as the parser reads them (the opener's indentation taken off each line); the
    lines hold no closing fence."""
    tokens = _MD.parse(opener + lines)
    info = tokens[0].info.strip().split(maxsplit=1) if tokens else []
    return (tokens[0].content if tokens else ""), (info[0] if info else "")


def render_blocks(text: str, palette: QPalette | None = None, copied: int | None = None) -> list[Block]:
    """``text`` (Markdown) as HTML for Qt's rich text in ``palette``'s colours, block by block;
    ``copied``: the code block (counted over the whole text) whose Copy link reads "Copied"."""
    style = code_style(palette) if palette is not None else CodeStyle()
    return render_from(text, 0, markdown_env(style, copied))


def render_markdown(text: str, palette: QPalette | None = None, copied: int | None = None) -> Rendered:
    """``text`` (Markdown) as HTML for Qt's rich text (:func:`render_blocks`, joined)."""
    blocks = render_blocks(text, palette, copied)
    return Rendered("".join(b.html for b in blocks).rstrip(), tuple(c for b in blocks for c in b.code_blocks))
