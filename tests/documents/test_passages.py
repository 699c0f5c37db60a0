"""A document too long for the prompt is searched: passages cut at paragraphs with their pages, the
ones like the question chosen with the real engine's embeddings (the embedded SmolLM2), within
the budget, in order, labelled, and a note that names what was read."""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path

import pytest

from desktop_app.documents.passages import PASSAGE_TOKENS, Embed, choose_passages, read_note, split_passages
from desktop_app.documents.reading import read_attachment
from desktop_app.engine import Engine
from tests.documents.files import make_pdf

TOPICS = [
    "The river delta floods every spring and farmers plant rice after the water recedes.",
    "Medieval castles were built with thick stone walls and narrow windows for defence.",
    "The orchestra tuned their violins before the concert began in the old hall.",
    "Photosynthesis converts sunlight, water and carbon dioxide into glucose and oxygen.",
    "The football team trained every morning on the muddy field near the school.",
    "Bakers knead the dough, let it rise, and bake the bread in a hot oven.",
]
NEEDLE = "The vault's access code for the Falcon project is 7731, and only Maria Chen may change it."
QUESTION = "What is the access code for the Falcon project vault?"


def count(text: str) -> int:
    """About a token every four characters, as English text takes in SmolLM2's tokenizer."""
    return len(text) // 4 + 1


@pytest.fixture(scope="module")
def embed(default_model: Path) -> Iterator[Embed]:
    engine = Engine()
    engine.load_target(default_model)
    yield lambda texts: engine.embed(texts).vectors
    engine.close()


def _haystack(paragraphs: int, needle_at: int) -> str:
    rng = random.Random(1)
    out = []
    for _ in range(paragraphs):
        topic = rng.choice(TOPICS)
        out.append(" ".join(rng.sample(topic.split(), len(topic.split()))) + " " + topic)
    out.insert(needle_at, NEEDLE)
    return "\n\n".join(out)


def test_the_needle_paragraph_is_among_the_chosen_passages(embed: Embed) -> None:
    text = _haystack(100, needle_at=64)
    chosen = choose_passages(text, QUESTION, 600, embed, count, name="report.txt")
    assert not chosen.whole and chosen.total >= 15 and len(chosen.chosen) <= 3
    assert NEEDLE in chosen.text
    numbers = [p.number for p in chosen.chosen]
    assert numbers == sorted(numbers) and count(chosen.text) <= 600
    needle_passage = next(p for p in chosen.chosen if NEEDLE in p.text)
    assert f"[passage {needle_passage.number} of {chosen.total}]\n" in chosen.text
    assert chosen.note.startswith("read passages ") and chosen.note.endswith(f"of {chosen.total} of report.txt")


def test_a_document_that_fits_is_given_whole(embed: Embed) -> None:
    chosen = choose_passages(NEEDLE, QUESTION, 600, embed, count, name="short.txt")
    assert chosen.whole and chosen.text == NEEDLE and chosen.note == ""


def test_passages_keep_paragraphs_whole_with_an_overlap() -> None:
    paragraphs = [f"Paragraph {i} says something about topic {i}. " * 6 for i in range(40)]
    passages = split_passages("\n\n".join(paragraphs), count)
    assert len(passages) > 5 and all(count(p.text) <= PASSAGE_TOKENS + 40 for p in passages)
    for paragraph in paragraphs:  # every paragraph is whole in some passage
        assert any(paragraph.strip() in p.text for p in passages)
    for before, after in zip(passages, passages[1:], strict=False):  # each starts with the end of the one before
        assert before.text[-40:].split()[-1] in after.text.split("\n\n")[0]


def test_a_paragraph_longer_than_a_passage_is_cut_at_sentences() -> None:
    sentences = [f"Sentence number {i} is here." for i in range(300)]
    passages = split_passages(" ".join(sentences), count)
    assert len(passages) > 3 and all(count(p.text) <= PASSAGE_TOKENS + 40 for p in passages)
    for sentence in sentences:
        assert any(sentence in p.text for p in passages)


def test_a_pdfs_passages_know_their_pages() -> None:
    pages = [f"Page {n} text. " * 60 for n in range(1, 7)]
    text = read_attachment("report.pdf", make_pdf(pages)).text
    passages = split_passages(text, count)
    assert all("[page" not in p.text for p in passages)
    assert sorted({page for p in passages for page in p.pages}) == [1, 2, 3, 4, 5, 6]
    for p in passages:
        for page in p.pages:
            assert f"Page {page} text." in p.text
    total = len(passages)
    assert read_note("report.pdf", [passages[0]], total) == f"read passage 1 of {total} of report.pdf (page 1)"
    assert passages[-1].pages == (5, 6)  # it starts with the end of page 5
    assert read_note("report.pdf", [passages[0], passages[2], passages[-1]], total) == (
        f"read passages 1, 3 and {total} of {total} of report.pdf (pages 1, {', '.join(map(str, passages[2].pages))}, 5, 6)"
    )
