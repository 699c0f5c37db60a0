"""One numeric parameter, declared once with its range, default and meaning. Llama-free."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Generic, TypeVar

N = TypeVar("N", int, float)

SHOWN_CHARS = 24  # a longer bad value is shortened in messages, so the message stays one readable line


def shown(value: object) -> str:
    """``value`` as a message quotes it: repr, shortened past :data:`SHOWN_CHARS`."""
    if isinstance(value, str):
        if len(value) <= SHOWN_CHARS:
            return repr(value)
        return f"{value[:SHOWN_CHARS]!r}... ({len(value)} characters)"
    try:
        text = repr(value)
    except ValueError:  # Python refuses to print ints past sys.get_int_max_str_digits() digits
        return "a number of thousands of digits"
    if len(text) <= SHOWN_CHARS:
        return text
    return f"{text[:SHOWN_CHARS]}... ({len(text)} characters)"


def _readable(value: float) -> str:
    """A bound as people read it: 131,072, 0.5."""
    return f"{int(value):,}" if float(value).is_integer() else str(value)


@dataclass(frozen=True)
class NumberRange(Generic[N]):
    """One numeric parameter: its bounds, default and meaning; :meth:`check` (and :meth:`parse`
    for text) is the only validation, so the CLI, the window and any API give the same message
    for a bad value."""

    name: str
    kind: type[N]
    low: N
    high: N
    default: N
    description: str
    low_open: bool = False  # the bound itself is not allowed

    def check(self, value: object) -> N:
        """``value`` as this parameter's type, or ValueError naming the parameter and its range.

        Any int or float is judged, however large: ints are compared with the bounds exactly
        (Python compares int with float without converting), never turned into a float first,
        which overflows past about 309 digits."""
        return self._checked(value, shown(value))

    def parse(self, text: str) -> N:
        """``text`` (a command-line value) as a checked number; ValueError in :meth:`check`'s words."""
        quoted = shown(text)
        try:
            value: int | float = int(text) if self.kind is int else float(text)
        except ValueError:
            if self.kind is int and text.strip().lstrip("+-").isdigit():  # past Python's digit limit for int()
                raise ValueError(self._out_of_range(quoted)) from None
            raise ValueError(f"{self.name} must be {self._a_number()} {self.bounds()}, not {quoted}") from None
        if isinstance(value, float) and math.isinf(value) and "inf" not in text.lower():
            raise ValueError(self._out_of_range(quoted))  # finite as written ("1e999"), too large for a float
        return self.check(value)  # a number now: the message quotes it as check does for any caller

    def accepts(self, value: object) -> bool:
        try:
            self.check(value)
        except ValueError:
            return False
        return True

    def in_words(self) -> str:
        """The values allowed, as people read them: "a whole number from 32 to 1,048,576" (the
        window's messages; :meth:`check`'s name the parameter, for the CLI and the API)."""
        low, high = _readable(self.low), _readable(self.high)
        if self.low_open:
            return f"{self._a_number()} above {low}, up to {high}"
        return f"{self._a_number()} from {low} to {high}"

    def bounds(self) -> str:
        if self.low_open:
            return f"above {self.low} and at most {self.high}"
        return f"between {self.low} and {self.high}"

    def _checked(self, value: object, quoted: str) -> N:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ValueError(f"{self.name} must be a number {self.bounds()}, not {quoted}")
        if isinstance(value, float) and not math.isfinite(value):
            raise ValueError(f"{self.name} must be a finite number {self.bounds()}, not {quoted}")
        if self.kind is int and isinstance(value, float) and not value.is_integer():
            raise ValueError(f"{self.name} must be a whole number {self.bounds()}, not {quoted}")
        too_low = value <= self.low if self.low_open else value < self.low
        if too_low or value > self.high:
            raise ValueError(self._out_of_range(quoted))
        return self.kind(value)  # in range, so a float of it is exact enough and an int of it exact

    def _out_of_range(self, quoted: str) -> str:
        return f"{self.name} must be {self.bounds()}, not {quoted}"

    def _a_number(self) -> str:
        return "a whole number" if self.kind is int else "a number"
