"""How much of an answer was copied from each document: verbatim runs of MIN_COPIED_CHARS or more,
whitespace collapsed, found quickly in a long document."""

from __future__ import annotations

import random
import time

import pytest

from desktop_app.documents.attribution import MIN_COPIED_CHARS, CopiedShare, copied_share, copied_shares

REPORT = (
    "Revenue for the first quarter rose to 4.2 million euros, driven by the new subscription plans.\n"
    "Costs fell by eight percent after the move to the smaller office in Lyon.\n"
    "The board expects the second quarter to be flat."
)


def test_the_share_is_the_copied_characters_of_the_answer() -> None:
    copied = "Costs fell by eight percent after the move to the smaller office in Lyon."
    own = "; that is good news for everyone here, I think."
    assert copied_share(copied + own, REPORT) == len(copied) / len(copied + own)
    assert copied_share(copied, REPORT) == 1.0
    assert copied_share("Nothing in common with the report at all, really nothing.", REPORT) == 0.0
    assert copied_share("", REPORT) == 0.0


def test_a_short_shared_phrase_is_not_copying() -> None:
    phrase = "the first quarter rose to"  # in the report, but shorter than a copied run
    assert len(phrase) < MIN_COPIED_CHARS and phrase in REPORT
    assert copied_share(f"Sales in the first quarter rose to a record, said the {phrase} chief.", REPORT) == 0.0


def test_line_breaks_and_spaces_do_not_break_a_run() -> None:
    pdf_text = "Revenue for the first\nquarter rose to 4.2 million   euros,\ndriven by the new subscription plans."
    answer = "Revenue for the first quarter rose to 4.2 million euros, driven by the new subscription plans."
    assert copied_share(answer, pdf_text) == 1.0


def test_each_document_gets_its_share_largest_first() -> None:
    notes = "Remember to call the supplier in Lyon about the invoice for March."
    answer = REPORT.split("\n")[0] + " Also: " + notes
    shares = copied_shares(answer, {"report.pdf": REPORT, "notes.txt": notes, "other.md": "unrelated text entirely"})
    assert [s.name for s in shares] == ["report.pdf", "notes.txt"]
    assert str(shares[0]) == f"copied {round(shares[0].share * 100)} % from report.pdf" and shares[0].share > 0.5
    assert str(CopiedShare("report.pdf", 0.6)) == "copied 60 % from report.pdf"


@pytest.mark.slow
def test_a_long_document_takes_a_fraction_of_a_second() -> None:
    rng = random.Random(3)
    words = ["".join(rng.choice("abcdefghij") for _ in range(rng.randint(2, 9))) for _ in range(5000)]
    document = " ".join(rng.choice(words) for _ in range(650_000))  # ~4 MB of text
    copied = document[2_000_000:2_003_000]
    answer = f"It says: {copied} and then my own words follow here, written fresh for this answer."
    started = time.monotonic()
    share = copied_share(answer, document)
    assert time.monotonic() - started < 3
    assert share == pytest.approx(len(copied) / len(answer), abs=0.01)
    started = time.monotonic()  # a document that repeats itself: every piece everywhere
    assert copied_share("the same sentence again. " * 800, "the same sentence again. " * 160_000) == 1.0
    assert time.monotonic() - started < 3
