"""LaTeX math in messages, drawn offline: inline ``$...$`` and ``\\(...\\)``, display ``$$...$$`` and
``\\[...\\]``, each formula an image in the rich text.

:func:`add_math_rules` teaches a markdown-it parser the four forms (after code spans and code
blocks are read, so math inside code stays code). A ``$`` opens inline math only when the
character after it is not a space, and closes it only when the character before it is not a
space and the one after is not a digit (Pandoc's rule): "$5 and $10" stays text.

:func:`formula_image` draws a formula with ziamath (pure Python, its own math font: no LaTeX
and no network) as SVG, painted by QtSvg into a PNG given as a ``data:`` URL that Qt's rich text
shows as an ``<img>``; cached. A formula that does not parse is shown as its source text.
"""

from __future__ import annotations

import base64
import html
import logging
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.rules_block import StateBlock
from markdown_it.rules_inline import StateInline
from markdown_it.token import Token
from PySide6.QtCore import QBuffer, QByteArray, QIODevice, QSize
from PySide6.QtGui import QColor, QFontInfo, QGuiApplication, QImage, QPainter
from PySide6.QtSvg import QSvgRenderer

log = logging.getLogger(__name__)

MATH_TITLE = "specchat-math"  # an image's title, naming a drawn formula
AXIS = 0.25  # the math axis (a fraction bar's height) above the baseline, in ems
MAX_FORMULA_CHARS = 600  # longer ones are shown as their source: drawing costs ~0.6 ms a character
_DELIMITERS = (("$$", "$$", True), ("\\[", "\\]", True), ("\\(", "\\)", False))


@dataclass(frozen=True)
class FormulaImage:
    """A formula drawn: its PNG as a ``data:`` URL and its size in the text, in pixels."""

    url: str
    width: int
    height: int


@lru_cache(maxsize=1)
def _ziamath() -> Any:
    """ziamath, imported with the first formula (it reads its math font then: about 0.1 s)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # its font is found with a legacy importlib API
        import ziamath  # noqa: PLC0415 - imported when first needed

    ziamath.config.svg2 = False  # plain paths: QtSvg (SVG Tiny) draws no <symbol>
    return ziamath


def _font_px() -> float:
    """The pixel size of the application's font (formulas are drawn a little larger)."""
    if QGuiApplication.instance() is None:
        return 14.0
    return float(QFontInfo(QGuiApplication.font()).pixelSize() or 14)


def _ratio() -> float:
    app = QGuiApplication.instance()
    return float(app.devicePixelRatio()) if isinstance(app, QGuiApplication) else 1.0


@lru_cache(maxsize=512)
def _drawn(latex: str, display: bool, color: str, size: float, ratio: float) -> FormulaImage | None:
    try:
        math = _ziamath().Latex(latex, size=size * (1.25 if display else 1.1), color=color)
        svg = math.svg()
    except Exception:  # noqa: BLE001 - latex2mathml and ziamath raise many kinds on a bad formula
        log.debug("formula not drawn: %r", latex, exc_info=True)
        return None
    renderer = QSvgRenderer(QByteArray(svg.encode()))
    view = renderer.viewBoxF()
    if not renderer.isValid() or view.width() <= 0 or view.height() <= 0:
        return None
    # the image's middle on the math axis, as Qt's rich text sets an image's middle on the line's
    axis = AXIS * size
    above, below = -view.top() - axis, view.bottom() + axis
    half = max(above, below, 1.0)
    width, height = int(view.width() + 1.999), int(2 * half + 1.999)
    image = QImage(QSize(round(width * ratio), round(height * ratio)), QImage.Format.Format_ARGB32_Premultiplied)
    image.fill(0)
    painter = QPainter(image)
    painter.scale(ratio, ratio)
    painter.translate(0, half - above)
    renderer.render(painter, view.translated(-view.left(), -view.top()))
    painter.end()
    data = QByteArray()
    buffer = QBuffer(data)
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    image.save(buffer, "PNG")  # type: ignore[call-overload]  # the stubs say bytes; PySide6 takes str
    url = "data:image/png;base64," + base64.b64encode(bytes(data.data())).decode("ascii")
    return FormulaImage(url, width, height)


def formula_image(latex: str, display: bool = False, color: str = "#1f2328") -> FormulaImage | None:
    """``latex`` drawn in ``color`` at the application font's size (larger for ``display``)
    and the screen's pixel ratio; None when it does not parse or is too long to draw at once."""
    if len(latex) > MAX_FORMULA_CHARS:
        return None
    return _drawn(latex.strip(), display, QColor(color).name(), _font_px(), _ratio())


def formula_html(latex: str, display: bool, source: str, color: str) -> str:
    """The ``<img>`` of a formula; its ``source`` as text when it does not parse."""
    image = formula_image(latex, display, color) if latex.strip() else None
    if image is None:
        return html.escape(source)
    alt = html.escape(source, quote=True)
    return (
        f'<img src="{image.url}" width="{image.width}" height="{image.height}" alt="{alt}" '
        f'title="{MATH_TITLE}" style="vertical-align: middle;" />'
    )


def _inline_dollar(src: str, start: int, end: int) -> int:
    """Where the ``$`` closing the inline math opened at ``start`` is, or -1."""
    if start + 1 >= end or src[start + 1].isspace():
        return -1
    at = start + 1
    while (at := src.find("$", at, end)) != -1:
        if src[at - 1] == "\\":
            at += 1
            continue
        if not src[at - 1].isspace() and not (at + 1 < end and src[at + 1].isdigit()):
            return at
        return -1  # "$5 and $10": the next dollar cannot close it, and none after it is looked for
    return -1


def _math_inline(state: StateInline, silent: bool) -> bool:
    src, pos, end = state.src, state.pos, state.posMax
    for opener, closer, display in _DELIMITERS:
        if not src.startswith(opener, pos):
            continue
        close = src.find(closer, pos + len(opener), end)
        if close == -1 or not src[pos + len(opener) : close].strip():
            return False
        return _push_math(state, silent, src[pos + len(opener) : close], display, close + len(closer))
    if src[pos] != "$" or (close := _inline_dollar(src, pos, end)) == -1:
        return False
    return _push_math(state, silent, src[pos + 1 : close], False, close + 1)


def _push_math(state: StateInline, silent: bool, latex: str, display: bool, after: int) -> bool:
    if not silent:
        token = state.push("math_inline", "img", 0)
        token.content, token.markup = latex, state.src[state.pos : after]
        token.meta = {"display": display}
    state.pos = after
    return True


def _math_block(state: StateBlock, start_line: int, end_line: int, silent: bool) -> bool:
    """``$$`` or ``\\[`` opening a line (and what it opens closed on that line or a later one)."""
    if state.sCount[start_line] - state.blkIndent >= 4:
        return False
    begin = state.bMarks[start_line] + state.tShift[start_line]
    first = state.src[begin : state.eMarks[start_line]]
    delimiter = next((d for d in _DELIMITERS[:2] if first.startswith(d[0])), None)
    if delimiter is None:
        return False
    opener, closer, _ = delimiter
    line, body = start_line, first[len(opener) :]
    while not body.rstrip().endswith(closer):
        line += 1
        if line >= end_line or state.isEmpty(line) or state.sCount[line] < state.blkIndent:
            return False  # unclosed within its paragraph (or still streaming): text
        body += "\n" + state.src[state.bMarks[line] + state.tShift[line] : state.eMarks[line]]
    latex = body.rstrip()[: -len(closer)]
    if not latex.strip():
        return False
    if not silent:
        token = state.push("math_block", "img", 0)
        token.content, token.markup = latex, opener + body.rstrip()
        token.map = [start_line, line + 1]
    state.line = line + 1
    return True


def _render_inline(self: Any, tokens: Sequence[Token], idx: int, options: Any, env: dict[str, Any]) -> str:
    token = tokens[idx]
    return formula_html(token.content, bool(token.meta.get("display")), token.markup, env["style"].text)


def _render_block(self: Any, tokens: Sequence[Token], idx: int, options: Any, env: dict[str, Any]) -> str:
    token = tokens[idx]
    return f'<p align="center">{formula_html(token.content, True, token.markup, env["style"].text)}</p>\n'


def add_math_rules(md: MarkdownIt) -> None:
    """Teach ``md`` LaTeX math: display blocks, and inline math read before backslash escapes."""
    md.block.ruler.before("fence", "math_block", _math_block, {"alt": ["paragraph", "reference", "blockquote", "list"]})
    md.inline.ruler.before("escape", "math_inline", _math_inline)
    md.add_render_rule("math_inline", _render_inline)
    md.add_render_rule("math_block", _render_block)
