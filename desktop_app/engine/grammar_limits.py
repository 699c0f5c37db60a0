"""What a GBNF grammar may cost before llama.cpp sees it.

llama.cpp's grammar parser descends recursively into every parenthesised group, so a grammar
nested some thousands deep overflows the thread's stack and kills the process (a worker thread's
stack can be 512 KiB); each ``{m,n}`` repetition becomes about ``n`` rules; and the text itself is
held for every state. :func:`grammar_problem` measures the three in one pass and refuses a grammar
past :data:`MAX_NESTING`, :data:`MAX_REPEATS` or :data:`MAX_CHARS`, so no grammar, whoever wrote it,
can take the engine down.
"""

from __future__ import annotations

from dataclasses import dataclass

MAX_CHARS = 1_000_000  # the grammar's text
MAX_NESTING = 64  # parenthesised groups inside one another, in one rule
MAX_REPEATS = 100_000  # the rules llama.cpp makes for all the {m,n} repetitions together


@dataclass(frozen=True)
class GrammarSize:
    chars: int
    nesting: int
    repeats: int

    def problem(self) -> str | None:
        """Why a grammar of this size is refused (None: it is not)."""
        if self.chars > MAX_CHARS:
            return f"the grammar is {self.chars:,} characters long, more than {MAX_CHARS:,}"
        if self.nesting > MAX_NESTING:
            return f"the grammar nests groups {self.nesting:,} deep, more than {MAX_NESTING}"
        if self.repeats > MAX_REPEATS:
            return f"the grammar's repetitions come to {self.repeats:,} rules, more than {MAX_REPEATS:,}"
        return None


def measure(grammar: str) -> GrammarSize:
    """The size of ``grammar``: its length, its deepest group nesting and the rules its ``{m,n}``
    repetitions expand into (string literals, character classes and comments skipped)."""
    depth = deepest = repeats = 0
    i, n = 0, len(grammar)
    while i < n:
        c = grammar[i]
        if c in '"[':
            close = '"' if c == '"' else "]"
            i += 1
            while i < n and grammar[i] != close:
                i += 2 if grammar[i] == "\\" else 1
        elif c == "#":
            while i < n and grammar[i] != "\n":
                i += 1
        elif c == "(":
            depth += 1
            deepest = max(deepest, depth)
        elif c == ")":
            depth -= 1
        elif c == "{":
            end = grammar.find("}", i)
            end = n if end < 0 else end
            bounds = [part.strip() for part in grammar[i + 1 : end].split(",")]
            repeats += max((int(b) for b in bounds if b.isdigit() and len(b) < 12), default=1) or 1
            i = end
        i += 1
    return GrammarSize(n, deepest, repeats)


def grammar_problem(grammar: str) -> str | None:
    """Why llama.cpp must not be given ``grammar`` (None: it may)."""
    if len(grammar) > MAX_CHARS:
        return GrammarSize(len(grammar), 0, 0).problem()
    return measure(grammar).problem()
