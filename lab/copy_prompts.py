"""The held-out copy prompts of ``python -m lab copies`` (issue 51), read from copy_prompts.toml.

Written for that bench and kept out of every set Auto was tuned on (resources/bench/prompts.json,
lab/peer_api.py, lab/field/): Auto was not tuned on them, so a figure on them says how it does on
copies it has never met. Each prompt asks the model to mostly copy what it was given: a small
code edit shown whole (several languages, 8 to 25 lines), a rewrite of a paragraph or a list, or
an extraction quoting part of a text. Two disjoint groups: ``again`` (each request sent several
times) and ``new`` (code edits asked once a round).
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path

PROMPTS_FILE = Path(__file__).with_name("copy_prompts.toml")
KINDS = ("code edit", "rewrite", "extraction")
GROUPS = ("again", "new")


@dataclass(frozen=True)
class CopyPrompt:
    name: str  # unique across both groups: ``--only`` picks prompts by it
    kind: str  # one of KINDS
    language: str  # the programming language of a code edit, or the text's
    text: str


def load_copy_prompts(path: Path = PROMPTS_FILE) -> dict[str, list[CopyPrompt]]:
    """Both groups, in file order; a prompt of an unknown kind, a missing group or a name used
    twice is an error (``--only`` would pick the wrong one)."""
    with path.open("rb") as handle:
        data = tomllib.load(handle)
    groups = {g: [CopyPrompt(**entry) for entry in data.get(g, [])] for g in GROUPS}
    names = [p.name for ps in groups.values() for p in ps]
    if duplicated := sorted({n for n in names if names.count(n) > 1}):
        raise ValueError(f"{path}: prompt names used twice: {', '.join(duplicated)}")
    if unknown := sorted({p.kind for ps in groups.values() for p in ps} - set(KINDS)):
        raise ValueError(f"{path}: unknown kinds {', '.join(unknown)} (known: {', '.join(KINDS)})")
    if empty := [g for g, ps in groups.items() if not ps]:
        raise ValueError(f"{path}: no prompts in {', '.join(empty)}")
    return groups


def only(groups: dict[str, list[CopyPrompt]], names: list[str] | None) -> dict[str, list[CopyPrompt]]:
    """The prompts named in ``names`` (all where None), each group keeping its order; a name that
    is not a prompt is an error, naming the known ones."""
    if not names:
        return groups
    known = {p.name for ps in groups.values() for p in ps}
    if unknown := [n for n in names if n not in known]:
        raise ValueError(f"no copy prompt {', '.join(unknown)}; known: {', '.join(sorted(known))}")
    return {g: [p for p in ps if p.name in names] for g, ps in groups.items()}
