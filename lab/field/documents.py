"""Long documents for the prompt benches: deterministic, varied English text.

A repeated sentence tokenizes unlike real text (a model's cache and a prompt-lookup drafter both
love it), so the text is built from seeded choices of names, places, actions and numbers, in
paragraphs: the same seed gives the same document on every machine (``random.Random`` is
stable across Python versions for ``choice`` and ``randint`` on these inputs), another seed a
different one, so each cold read gets a document no server has seen.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator

_NAMES = (
    "Amara", "Bruno", "Chen", "Dalia", "Emeka", "Freya", "Goran", "Hana", "Ivo", "Jonas",
    "Keiko", "Lucia", "Mateo", "Nadia", "Oskar", "Priya", "Quentin", "Rosa", "Samir", "Tove",
)  # fmt: skip
_PLACES = (
    "the harbour office", "a mountain village", "the old library", "the night market", "a research station",
    "the river ferry", "a small bakery", "the city archive", "a wind farm", "the railway depot",
    "a school in the valley", "the botanical garden", "a repair shop", "the observatory", "a fishing cooperative",
)  # fmt: skip
_ACTIONS = (
    "repaired the broken pump", "counted the winter supplies", "wrote a report on the flooding",
    "planted a row of apple trees", "measured the depth of the lake", "organised a meeting about the budget",
    "translated the letters from the archive", "tested the new water filters", "mapped the hiking trails",
    "trained two apprentices", "rebuilt the stone wall", "catalogued the seed collection",
    "negotiated the price of timber", "recorded the migrating birds", "painted the signal tower",
)  # fmt: skip
_OBJECTS = (
    "crates of tools", "litres of diesel", "sacks of flour", "solar panels", "pages of notes",
    "boxes of glass jars", "metres of copper cable", "bags of cement", "sheep", "bicycles",
)  # fmt: skip
_REASONS = (
    "because the spring had come early", "after the storm had closed the road",
    "since the council had asked for it twice", "while the weather held", "before the inspectors arrived",
    "although nobody had paid for it yet", "so that the children could use it in autumn",
    "because the old one had failed in March", "as the contract required", "after a long argument",
)  # fmt: skip
_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October")
_OPINIONS = (
    "Most people agreed that it was worth the effort.",
    "Some of the neighbours complained about the noise.",
    "The results were better than anyone had expected.",
    "Nobody was sure whether it would last another year.",
    "It cost more than the first estimate, but not by much.",
    "The local newspaper wrote a short article about it.",
    "A few details are still missing from the records.",
    "Everyone involved wanted to try a different method next time.",
)  # fmt: skip


def sentences(seed: int) -> Iterator[str]:
    """An endless, seeded stream of sentences, one paragraph break (``"\\n\\n"`` prefix) every few."""
    rng = random.Random(seed)
    n = 0
    while True:
        name, other = rng.sample(_NAMES, 2)
        kind = rng.randint(0, 5)
        if kind == 0:
            text = f"In {rng.choice(_MONTHS)}, {name} {rng.choice(_ACTIONS)} at {rng.choice(_PLACES)}."
        elif kind == 1:
            count = rng.randint(2, 480)
            text = f"{name} and {other} brought {count} {rng.choice(_OBJECTS)} to {rng.choice(_PLACES)} {rng.choice(_REASONS)}."
        elif kind == 2:
            text = f"{other} {rng.choice(_ACTIONS)} {rng.choice(_REASONS)}, and {name} kept the accounts."
        elif kind == 3:
            text = (
                f"According to {name}, {rng.choice(_PLACES)} needed {rng.randint(3, 90)} more "
                f"{rng.choice(_OBJECTS)} by {rng.choice(_MONTHS)}."
            )
        elif kind == 4:
            text = f"When {other} visited {rng.choice(_PLACES)}, {name} had already {rng.choice(_ACTIONS)}."
        else:
            text = rng.choice(_OPINIONS)
        n += 1
        yield ("\n\n" if n > 1 and rng.random() < 0.2 else " " if n > 1 else "") + text


def document(seed: int, tokens: int, count: Callable[[str], int]) -> str:
    """The seed's text, whole sentences, until ``count`` (a tokenizer's count, or any length
    measure) of it reaches ``tokens``. Sentences are counted one by one (their sum is within a
    few tokens of the whole's: each starts with a space or a paragraph break)."""
    parts: list[str] = []
    total = 0
    for sentence in sentences(seed):
        if total >= tokens:
            break
        parts.append(sentence)
        total += count(sentence)
    return "".join(parts)
