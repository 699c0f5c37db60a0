"""NumberRange: every int or float is judged with a message naming the parameter and its range."""

from __future__ import annotations

import pytest

from desktop_app.engine.api import MAX_TOKENS, SEED, TEMPERATURE
from desktop_app.engine.workers import WorkerAddress

HUGE = "9" * 400


@pytest.mark.parametrize(
    "value",
    [10**400, -(10**400), 10**5000, float(HUGE[:300])],
    ids=["400 digits", "minus 400 digits", "5000 digits", "1e300"],
)
def test_huge_numbers_are_out_of_range_not_a_crash(value: int | float) -> None:
    # math.isfinite(10**400) raises OverflowError; check must answer in its own words instead.
    for number in (MAX_TOKENS, TEMPERATURE):
        with pytest.raises(ValueError, match=rf"^{number.name} must be between "):
            number.check(value)
        assert not number.accepts(value)


@pytest.mark.parametrize(
    "text,rule",
    [
        ("abc", "must be a whole number between 0 and"),
        ("2.5", "must be a whole number between 0 and"),
        ("nan", "must be a whole number between 0 and"),
        ("1e999", "must be a whole number between 0 and"),
        (HUGE, "must be between 0 and"),
        ("9" * 5000, "must be between 0 and"),  # past Python's own digit limit for int()
    ],
    ids=["abc", "2.5", "nan", "1e999", "400 digits", "5000 digits"],
)
def test_text_for_a_whole_number_gets_one_short_message(text: str, rule: str) -> None:
    with pytest.raises(ValueError) as caught:
        SEED.parse(text)
    message = str(caught.value)
    assert message.startswith(f"seed {rule} 9223372036854775807, not ")
    assert len(message) < 120  # the value is shortened, the message stays one readable line


@pytest.mark.parametrize(
    "text,rule",
    [
        ("abc", "must be a number between"),
        ("nan", "must be a finite number between"),
        ("-inf", "must be a finite number between"),
        ("1e999", "must be between"),  # a finite number as written, too large for a float
        (HUGE, "must be between"),
    ],
    ids=["abc", "nan", "-inf", "1e999", "400 digits"],
)
def test_text_for_a_decimal_gets_the_same_words_as_check(text: str, rule: str) -> None:
    with pytest.raises(ValueError, match=rf"^temperature {rule} 0\.0 and 5\.0, not "):
        TEMPERATURE.parse(text)


def test_text_in_range_parses_to_the_parameters_type() -> None:
    assert MAX_TOKENS.parse(" 64 ") == 64 and isinstance(MAX_TOKENS.parse("64"), int)
    assert TEMPERATURE.parse("0.5") == 0.5 and TEMPERATURE.parse("1") == 1.0


def test_a_worker_port_is_judged_by_the_ports_range() -> None:
    with pytest.raises(
        ValueError,
        match=r"^worker address .127\.0\.0\.1:9+.\.\.\. \(410 characters\): "
        r"worker_port must be between 1 and 65535",
    ):
        WorkerAddress.parse(f"127.0.0.1:{HUGE}")
    assert WorkerAddress.parse("127.0.0.1:50060").port == 50060
