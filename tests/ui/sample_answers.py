"""Answers as models write them, for the transcript's rendering tests: a long one in sections of
the same shape, and short ones where later text changes what earlier text was."""

from __future__ import annotations

from collections.abc import Iterator

from desktop_app.engine_process.protocol import Piece

# One section of a long answer (about 290 tokens): a heading, a paragraph with a link, a numbered
# list with a continued item and a nested list, a code fence, a table and a block quote.
SECTION = """## Step {n}: reading the configuration

The loader reads the **configuration file** once, at start-up, and keeps the values it found in a
frozen object so that every part of the program sees the same settings. A missing file is not an
error: the defaults apply, and the first save writes them out. See [the docs](https://example.com/docs/{n}).

1. Open the file with `open(path, encoding="utf-8")`.
2. Parse it with `tomllib.load`, which raises `TOMLDecodeError` on bad input;
   catch it and report the line.
3. Check each key against the declared options:
   - unknown keys are reported, never silently ignored,
   - values of the wrong type fall back to the default.

```python
def load_settings(path: Path) -> Settings:
    try:
        with path.open("rb") as f:
            raw = tomllib.load(f)
    except FileNotFoundError:
        return Settings()
    return Settings(**{{k: v for k, v in raw.items() if k in FIELDS}})
```

| Option | Type | Default |
|--------|------|---------|
| threads | int | 4 |
| model | str | "tiny" |

> Note: values read from the environment win over the file, so a test can point
> `SPECCHAT_HOME` at a temporary directory.

"""
CHARS_PER_TOKEN = 4


def long_answer(sections: int) -> str:
    return "".join(SECTION.format(n=i + 1) for i in range(sections))


# Texts where later lines change what earlier ones were, as they stream in.
TRICKY = {
    "a code fence open for a while, then closed": (
        "Before the code.\n\n```python\ndef f(x):\n    return x < 1\n\n\n# not a heading\n- not a list\n"
        "```\nAfter the fence, *emphasis*.\n\n```\nunclosed at the end\n"
    ),
    "a list continued across chunks": (
        "1. one\n\n2. two\n3. three\n\n   more of three\n\nthen text\n- a\n- b\n\n  more of b\n\n"
        "1. a list\n\n2\n\n- x\n\n+ y\n"
    ),
    "a paragraph that becomes a setext heading": (
        "A title after all\n=====\n\nThis paragraph\n---\nText\n\n> quoted\nlazy line\n\n***\n#\n#x\n"
    ),
    "reference links defined after their use": (
        "See [docs] and [other].\n\n## Links\n\nMore text.\n\n[docs]: https://example.com/a\n"
        "[other]: https://example.com/b 'Other'\n\nagain [docs]\n"
    ),
    "a table, then indented code": ("| a | b |\n|---|---|\n| 1 | 2 |\n| 3 | 4 |\ntext\n\n    indented code\n\nend\n"),
}


def drafted(text: str, size: int) -> Iterator[Piece]:
    """``text`` in pieces of ``size`` characters, every third one from the n-gram drafter."""
    for i, start in enumerate(range(0, len(text), size)):
        yield text[start : start + size], "ngram" if i % 3 == 0 else ""


# A source file as a small model writes one in a single code block: one function after another,
# with docstrings, comments, strings and numbers (about 10 tokens a line).
_FUNCTION = '''def step_{n}(items: list[Item], scale: float = 2.5) -> list[float]:
    """Scale each item's weight; an empty list gives an empty list."""
    totals = []
    for index, item in enumerate(items):  # one pass, in order
        if item.weight > {n}:
            totals.append(item.weight * scale + index)
        else:
            totals.append(f"skipped {{item.name!r}} at {{index}}")
    return totals

'''
CODE_LINES_PER_FUNCTION = _FUNCTION.count("\n")


def code_file(lines: int) -> str:
    """``lines`` lines of Python source (each ending in a line break)."""
    text = "".join(_FUNCTION.format(n=i) for i in range(lines // CODE_LINES_PER_FUNCTION + 1))
    return "".join(text.splitlines(keepends=True)[:lines])
