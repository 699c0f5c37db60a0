"""How much of an answer was copied from each document: the share of the answer's characters that
lie in verbatim runs of at least :data:`MIN_COPIED_CHARS` found in the document ("copied 60 %
from report.pdf"), the figure that says why prompt lookup paid.

Runs are found through an index of the document's :data:`_WINDOW`-character pieces at every
:data:`_STRIDE`-th position: a run of MIN_COPIED_CHARS (= window + stride) characters always holds
one indexed piece whole, so every such run is found from it and extended both ways by direct
comparison. The index holds a document's length / stride entries (200,000 for a 4 MB text), and
the answer is scanned once: a long document costs a fraction of a second where
``difflib.SequenceMatcher`` takes minutes. Whitespace is compared collapsed (a PDF's line breaks
against the answer's spaces).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

# A verbatim run this long (about eight words) is copying, not a phrase the answer shares with
# the document by chance ("in the first quarter of the"); shorter runs are not counted.
MIN_COPIED_CHARS = 40
_WINDOW = MIN_COPIED_CHARS // 2
_STRIDE = MIN_COPIED_CHARS - _WINDOW
_MAX_PLACES = 16  # positions kept for one indexed piece (a document that repeats itself)
_SPACES = re.compile(r"\s+")


@dataclass(frozen=True)
class CopiedShare:
    name: str
    share: float  # 0..1 of the answer's characters (whitespace collapsed)

    def __str__(self) -> str:
        return f"copied {round(self.share * 100)} % from {self.name}"


def copied_shares(answer: str, documents: Mapping[str, str]) -> list[CopiedShare]:
    """Each document's share of ``answer`` (a name mapped to its text), largest first; documents
    the answer copied nothing from are left out."""
    shares = [CopiedShare(name, copied_share(answer, text)) for name, text in documents.items()]
    return sorted((s for s in shares if s.share > 0), key=lambda s: -s.share)


def copied_share(answer: str, document: str) -> float:
    """The share of ``answer``'s characters inside runs of MIN_COPIED_CHARS or more copied verbatim from ``document``."""
    said, source = _collapsed(answer), _collapsed(document)
    if not said:
        return 0.0
    covered = _covered(said, source, _index(source))
    return covered / len(said)


def _collapsed(text: str) -> str:
    return _SPACES.sub(" ", text).strip()


def _index(source: str) -> dict[str, list[int]]:
    index: dict[str, list[int]] = {}
    for start in range(0, len(source) - _WINDOW + 1, _STRIDE):
        places = index.setdefault(source[start : start + _WINDOW], [])
        if len(places) < _MAX_PLACES:
            places.append(start)
    return index


def _covered(said: str, source: str, index: dict[str, list[int]]) -> int:
    """How many of ``said``'s characters lie in runs found in ``source``: each indexed piece of the
    answer extended both ways; a run already found along the same alignment is not walked again."""
    runs: list[tuple[int, int]] = []
    reach: dict[int, int] = {}  # alignment (source position - answer position) -> end of its run found so far
    for i in range(len(said) - _WINDOW + 1):
        for place in index.get(said[i : i + _WINDOW], ()):
            shift = place - i
            if reach.get(shift, -1) > i:
                continue
            start, end = _extend(said, source, i, shift)
            reach[shift] = end
            if end - start >= MIN_COPIED_CHARS:
                runs.append((start, end))
    covered, last = 0, 0
    for start, end in sorted(runs):
        start = max(start, last)
        if end > start:
            covered += end - start
            last = end
    return covered


def _extend(said: str, source: str, i: int, shift: int) -> tuple[int, int]:
    """The run through ``said[i]`` where ``said[k] == source[k + shift]``, as far as it goes each way."""
    start = i
    while start > 0 and start + shift > 0 and said[start - 1] == source[start - 1 + shift]:
        start -= 1
    end, step = i + _WINDOW, 256
    while step:  # whole slices first (compared in C), halved at each mismatch down to one character
        if end + step <= len(said) and said[end : end + step] == source[end + shift : end + shift + step]:
            end += step
        else:
            step //= 2
    return start, end
