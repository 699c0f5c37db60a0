"""A document too long for the prompt, searched: cut into passages, ranked against the question
by their embeddings, and the best that fit a token budget given back in the document's order.

- **Passages** (:func:`split_passages`): paragraphs (blank-line separated) gathered up to
  :data:`PASSAGE_TOKENS`, a paragraph longer than that cut at sentence or word boundaries, each
  passage starting with the last ~:data:`OVERLAP_TOKENS` of the one before (a fact cut in two is
  whole in one of them). A PDF's ``[page N]`` lines (:data:`~.reading.PAGE_MARKER`) are left out of
  the passages' text and kept as their page numbers.
- **Ranking** (:func:`choose_passages`): the question and the passages embedded by ``embed`` (the
  engine's unit vectors), scored by cosine (a dot product), the best taken while their labelled
  text fits ``budget`` tokens (``count``), then put back in document order, each labelled with
  its number and pages (:data:`PASSAGE_LABEL`), and a note naming what was read.

Pure functions (no engine, no Qt): the window runs them off its thread with its engine's
``embed`` and token ``count``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from desktop_app.documents.reading import PAGE_MARKER_RE

PASSAGE_TOKENS = 256  # a passage: a few paragraphs, short enough that one fact dominates its embedding
OVERLAP_TOKENS = 32  # carried from the passage before: a sentence or two
EMBED_BATCH = 32  # passages embedded per call (32 x ~300 tokens: well under the engine's 16,384 a request)
PASSAGE_LABEL = "[passage {number} of {total}{pages}]"  # the line before each chosen passage in the prompt

Count = Callable[[str], int]
Embed = Callable[[list[str]], list[list[float]]]

_PARAGRAPHS = re.compile(r"\n\s*\n")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


@dataclass(frozen=True)
class Passage:
    number: int  # 1-based, in the document's order
    text: str
    pages: tuple[int, ...]  # the PDF pages it spans; () for a document without pages

    def label(self, total: int) -> str:
        return PASSAGE_LABEL.format(number=self.number, total=total, pages=_pages_phrase(self.pages, ", "))


@dataclass(frozen=True)
class ChosenPassages:
    """What of a document goes into the prompt: ``text`` (the whole document when it fits, else
    the chosen passages, labelled, in order) and ``note`` for the user ("" when it was whole)."""

    name: str
    chosen: tuple[Passage, ...]
    total: int  # passages the document was cut into
    text: str
    note: str

    @property
    def whole(self) -> bool:
        return not self.note


def split_passages(text: str, count: Count, size: int = PASSAGE_TOKENS, overlap: int = OVERLAP_TOKENS) -> list[Passage]:
    """``text`` cut into passages of about ``size`` tokens (``count``), paragraph by paragraph,
    each starting with the last ~``overlap`` tokens of the one before."""
    units = list(_units(text, count, size))
    passages: list[Passage] = []
    current: list[tuple[str, int, int]] = []  # (text, tokens, page)
    tokens = 0
    for unit in units:
        if current and tokens + unit[1] > size:
            passages.append(_passage(len(passages) + 1, current))
            current = _carried(current, overlap)
            tokens = sum(u[1] for u in current)
        current.append(unit)
        tokens += unit[1]
    if current and any(u[0].strip() for u in current):
        passages.append(_passage(len(passages) + 1, current))
    return passages


def choose_passages(text: str, question: str, budget: int, embed: Embed, count: Count, *, name: str) -> ChosenPassages:
    """The passages of ``text`` (document ``name``) most like ``question`` that fit ``budget``
    tokens with their labels, in the document's order; the whole text when it fits."""
    if count(text) <= budget:
        return ChosenPassages(name, (), 0, text, "")
    passages = split_passages(text, count)
    scores = _scores(question, [p.text for p in passages], embed)
    chosen: list[Passage] = []
    used = 0
    for i in sorted(range(len(passages)), key=lambda i: -scores[i]):
        cost = count(f"{passages[i].label(len(passages))}\n{passages[i].text}\n\n")
        if used + cost <= budget:
            chosen.append(passages[i])
            used += cost
        if budget - used < OVERLAP_TOKENS:  # no passage fits what is left
            break
    chosen.sort(key=lambda p: p.number)
    shown = "\n\n".join(f"{p.label(len(passages))}\n{p.text}" for p in chosen)
    return ChosenPassages(name, tuple(chosen), len(passages), shown, read_note(name, chosen, len(passages)))


def read_note(name: str, chosen: Sequence[Passage], total: int) -> str:
    """What was read of a document: "read passages 3, 7 and 12 of 40 of report.pdf (pages 2, 5, 9)"."""
    if not chosen:
        return f"read none of the {total} passages of {name}: none fits the context left"
    numbers = [str(p.number) for p in chosen]
    which = numbers[0] if len(numbers) == 1 else f"{', '.join(numbers[:-1])} and {numbers[-1]}"
    pages = sorted({page for p in chosen for page in p.pages})
    plural = "passage" if len(chosen) == 1 else "passages"
    return f"read {plural} {which} of {total} of {name}{_pages_phrase(tuple(pages), ' (', ')')}"


def _scores(question: str, texts: list[str], embed: Embed) -> list[float]:
    vectors = [embed([question])[0]]
    for start in range(0, len(texts), EMBED_BATCH):
        vectors.extend(embed(texts[start : start + EMBED_BATCH]))
    # Unit vectors: the dot product is the cosine. Plain Python (a few hundred passages of a few
    # hundred values): the window's process, which calls this, loads no numpy.
    question_vector = vectors[0]
    return [math.fsum(a * b for a, b in zip(v, question_vector, strict=True)) for v in vectors[1:]]


def _units(text: str, count: Count, size: int) -> list[tuple[str, int, int]]:
    """The text's paragraphs (or pieces of one longer than ``size``) with their tokens and page."""
    page = 0
    out: list[tuple[str, int, int]] = []
    for paragraph in _PARAGRAPHS.split(text):
        lines = paragraph.strip().split("\n")
        while lines and (marker := PAGE_MARKER_RE.fullmatch(lines[0].strip())):
            page, lines = int(marker.group(1)), lines[1:]
        paragraph = "\n".join(lines).strip()
        if not paragraph:
            continue
        tokens = count(paragraph)
        if tokens <= size:
            out.append((paragraph, tokens, page))
            continue
        for piece in _cut(paragraph, tokens, size):
            out.append((piece, count(piece), page))
    return out


def _cut(paragraph: str, tokens: int, size: int) -> list[str]:
    """A paragraph longer than ``size`` tokens in pieces of about ``size``: whole sentences where
    they fit, else words (the characters a token takes estimated from the paragraph's own)."""
    chars = max(1, len(paragraph) * size // tokens)
    pieces: list[str] = []
    current = ""
    for sentence in _SENTENCE_END.split(paragraph):
        while len(sentence) > chars:  # a sentence longer than a passage: cut at the last space that fits
            cut = sentence.rfind(" ", 0, chars)
            cut = cut if cut > chars // 2 else chars
            sentence, head = sentence[cut:].lstrip(), sentence[:cut]
            if current:
                pieces.append(current)
                current = ""
            pieces.append(head)
        if current and len(current) + 1 + len(sentence) > chars:
            pieces.append(current)
            current = sentence
        else:
            current = f"{current} {sentence}" if current else sentence
    if current:
        pieces.append(current)
    return pieces


def _carried(units: list[tuple[str, int, int]], overlap: int) -> list[tuple[str, int, int]]:
    """The last ~``overlap`` tokens of a passage's units, to start the next one with."""
    text, tokens, page = units[-1]
    if tokens <= overlap:
        return [units[-1]]
    keep = len(text) * overlap // tokens
    start = text.find(" ", len(text) - keep)
    tail = text[start + 1 :] if 0 <= start < len(text) - 1 else text[-keep:]
    return [(tail, overlap, page)] if keep else []


def _passage(number: int, units: list[tuple[str, int, int]]) -> Passage:
    pages = tuple(sorted({u[2] for u in units if u[2]}))
    return Passage(number, "\n\n".join(u[0] for u in units), pages)


def _pages_phrase(pages: tuple[int, ...], before: str, after: str = "") -> str:
    if not pages:
        return ""
    word = "page" if len(pages) == 1 else "pages"
    return f"{before}{word} {', '.join(map(str, pages))}{after}"
