"""The document bench's tasks: questions over real documents a Debian system ships offline.

Four documents nobody tuned SpecChat on (a short licence, a long one, a README and a changelog),
each read whole from its file (the changelog's first entries only), and two kinds of task:

- ``quote``: answers that copy the document (quote a section, copy a list, extract lines,
  rewrite with one change), where drafting from the prompt should pay;
- ``rest``: answers in the model's own words (summaries, short answers, yes/no with a reason).

The document goes in the user's message as the window and the API inline it: one block naming
the file, then the question (:func:`desktop_app.documents.prompt_text.to_message`).
"""

from __future__ import annotations

import gzip
import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from desktop_app.documents.attachment import Attachment, AttachmentKind
from desktop_app.documents.prompt_text import to_message

QUOTE = "quote"
REST = "rest"
CATEGORIES = (QUOTE, REST)


@dataclass(frozen=True)
class Source:
    """A document: the name the model sees, its file, and for a changelog its first entries only."""

    name: str
    path: Path
    entries: int | None = None  # a Debian changelog's entries to keep (each ends with a " -- " line)


@dataclass(frozen=True)
class Task:
    name: str
    category: str  # QUOTE or REST
    source: str  # a Source's name
    question: str
    max_tokens: int


SOURCES = (
    Source("BSD", Path("/usr/share/common-licenses/BSD")),
    Source("LGPL-3", Path("/usr/share/common-licenses/LGPL-3")),
    Source("bash-README", Path("/usr/share/doc/bash/README.gz")),
    Source("bash-changelog", Path("/usr/share/doc/bash/changelog.Debian.gz"), entries=10),
)

TASKS = (  # grouped by document, as a user asks several things of one file
    Task("bsd-conditions", QUOTE, "BSD", "Copy the three numbered conditions of this license exactly as written.", 200),
    Task(
        "bsd-rewrite",
        QUOTE,
        "BSD",
        "Rewrite the whole license with one change: the copyright holder is Example Corp instead of The Regents "
        "of the University of California. Keep every other word as it is.",
        400,
    ),
    Task("bsd-sell", REST, "BSD", "Does this license allow selling the software? Answer yes or no, and say why.", 120),
    Task(
        "lgpl-section-4d",
        QUOTE,
        "LGPL-3",
        'Quote item d) of section 4, "Combined Works", verbatim, with both of its options.',
        300,
    ),
    Task(
        "lgpl-definitions",
        QUOTE,
        "LGPL-3",
        'Copy the definition of "Combined Work" and of "Minimal Corresponding Source" word for word.',
        200,
    ),
    Task("lgpl-summary", REST, "LGPL-3", "Summarize this license in three sentences.", 160),
    Task(
        "bash-bug-list",
        QUOTE,
        "bash-README",
        "Copy the list of things a bug report should include, exactly as the document gives it.",
        200,
    ),
    Task("bash-compile", REST, "bash-README", "How do I compile Bash? Answer in one or two sentences.", 120),
    Task("bash-purpose", REST, "bash-README", "What is Bash, in your own words? One short paragraph.", 160),
    Task(
        "changelog-closes",
        QUOTE,
        "bash-changelog",
        'Extract every line that mentions "Closes:", exactly as written, one per line.',
        300,
    ),
    Task(
        "changelog-who",
        REST,
        "bash-changelog",
        "Who made most of these changes, and in which years? Answer briefly.",
        120,
    ),
)

# Copies the built-in SmolLM2-135M really makes: asked to quote a part, it mostly writes its own
# words and loops (the first run, docs/benchmarks/2026-12-05-documents.md); asked to repeat a short
# document or an entry, most of its answer is the document's text.
COPY_TASKS = (
    Task("bsd-repeat", QUOTE, "BSD", "Repeat the document above exactly, word for word.", 300),
    Task(
        "bsd-repeat-renamed",
        QUOTE,
        "BSD",
        "Repeat the document above exactly, but write Example Corp instead of The Regents of the University of "
        "California.",
        300,
    ),
    Task("changelog-repeat", QUOTE, "bash-changelog", "Repeat the document above exactly, word for word.", 300),
    Task(
        "changelog-first-entry", QUOTE, "bash-changelog", "Repeat the first entry of the document above exactly.", 200
    ),
)


def read_source(source: Source) -> str:
    """The document's text as a user would attach it (a ``.gz`` file read unpacked)."""
    if not source.path.exists():
        raise ValueError(f"{source.path} not found: the document bench reads documents a Debian system ships")
    data = source.path.read_bytes()
    text = (gzip.decompress(data) if source.path.suffix == ".gz" else data).decode("utf-8")
    if source.entries is not None:
        text = first_entries(text, source.entries)
    return text.strip("\n")


def first_entries(changelog: str, entries: int) -> str:
    """A Debian changelog's first ``entries`` entries (each closed by its `` -- name <mail>  date`` line)."""
    lines = changelog.splitlines()
    ends = [i for i, line in enumerate(lines) if line.startswith(" -- ")]
    if len(ends) < entries:
        raise ValueError(f"the changelog has {len(ends)} entries, fewer than {entries}")
    return "\n".join(lines[: ends[entries - 1] + 1])


def document_message(name: str, text: str, question: str) -> str:
    """The user's message as the window and the API make it: the document's block, then the question."""
    document = Attachment(name, AttachmentKind.DOCUMENT, "text/plain", text.encode("utf-8"), text)
    return to_message("user", question, [document])["content"]


def fingerprint(text: str) -> str:
    """A short hash of a document, so a report says which version of it was read."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


SPAN = 24  # characters: a shared stretch this long is a copy, not a common phrase


def copied_share(answer: str, document: str) -> float:
    """The share of ``answer``'s characters inside a stretch of at least :data:`SPAN` characters
    that ``document`` holds word for word: how much of the answer is a quote."""
    return _covered(answer, lambda i, j: answer[i:j] in document)


def repeated_share(answer: str) -> float:
    """The share of ``answer``'s characters inside a stretch of at least :data:`SPAN` characters
    that the answer already wrote before it: how much of it is a loop over itself."""
    return _covered(answer, lambda i, j: answer[i:j] in answer[: j - 1])


def _covered(answer: str, found: Callable[[int, int], bool]) -> float:
    covered = [False] * len(answer)
    i = 0
    while i + SPAN <= len(answer):
        if not found(i, i + SPAN):
            i += 1
            continue
        j = i + SPAN
        while j < len(answer) and found(i, j + 1):
            j += 1
        covered[i:j] = [True] * (j - i)
        i = j
    return sum(covered) / len(answer) if answer else 0.0
