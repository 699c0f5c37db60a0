"""One numeric parameter, declared once with its range, default and meaning. Llama-free."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Generic, TypeVar

N = TypeVar("N", int, float)


@dataclass(frozen=True)
class NumberRange(Generic[N]):
    """One numeric parameter: its bounds, default and meaning; :meth:`check` is the only
    validation, so the CLI, the window and any API give the same message for a bad value."""

    name: str
    kind: type[N]
    low: N
    high: N
    default: N
    description: str
    low_open: bool = False  # the bound itself is not allowed

    def check(self, value: object) -> N:
        """``value`` as this parameter's type, or ValueError naming the parameter and its range."""
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ValueError(f"{self.name} must be a number {self.bounds()}, not {value!r}")
        if self.kind is int and not (isinstance(value, int) or float(value).is_integer()):
            raise ValueError(f"{self.name} must be a whole number {self.bounds()}, not {value!r}")
        if not math.isfinite(value):
            raise ValueError(f"{self.name} must be a finite number {self.bounds()}, not {value!r}")
        number = self.kind(value)
        too_low = number <= self.low if self.low_open else number < self.low
        if too_low or number > self.high:
            raise ValueError(f"{self.name} must be {self.bounds()}, not {value!r}")
        return number

    def accepts(self, value: object) -> bool:
        try:
            self.check(value)
        except ValueError:
            return False
        return True

    def bounds(self) -> str:
        if self.low_open:
            return f"above {self.low} and at most {self.high}"
        return f"between {self.low} and {self.high}"
