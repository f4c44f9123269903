"""What a benchmark reports: rows of A vs B figures, their ratio, and the target a figure group is held to."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from turnstream.stats import percentile

T = TypeVar("T")
SIGNIFICANT_DIGITS = 4


def rounded(value: float, digits: int = SIGNIFICANT_DIGITS) -> float:
    """`value` to `digits` significant digits: what the table prints and the JSON holds; integers stay whole."""
    if isinstance(value, int) or value == 0 or not math.isfinite(value):
        return value
    return round(value, digits - 1 - math.floor(math.log10(abs(value))))


def ratio(a: float, b: float) -> float | None:
    """a / b, or None when b is zero (a ratio to nothing says nothing)."""
    return None if b == 0 else a / b


def p50_p99(samples: Sequence[float]) -> tuple[float, float]:
    return percentile(samples, 50), percentile(samples, 99)


def abba(rounds: int) -> Iterator[tuple[int, bool]]:
    """(round, a_first) for `rounds` rounds: A B, B A, A B, ... so a drift in machine speed hits both sides alike."""
    for index in range(rounds):
        yield index, index % 2 == 0


def interleaved(a: Callable[[], T], b: Callable[[], T], rounds: int) -> tuple[list[T], list[T]]:
    """Run `a` and `b` `rounds` times each in ABBA order; their results, in round order."""
    results_a: list[T] = []
    results_b: list[T] = []
    for _, a_first in abba(rounds):
        for run, results in ((a, results_a), (b, results_b)) if a_first else ((b, results_b), (a, results_a)):
            results.append(run())
    return results_a, results_b


@dataclass(frozen=True)
class Row:
    """One measure: figure A (ours) against figure B (the yardstick), both already rounded."""

    measure: str
    unit: str
    a: float
    b: float

    @classmethod
    def of(cls, measure: str, unit: str, a: float, b: float) -> Row:
        return cls(measure, unit, rounded(a), rounded(b))

    @property
    def ratio(self) -> float | None:
        # from the rounded figures, so the printed ratio is the quotient of the printed figures
        return ratio(self.a, self.b)

    def to_dict(self) -> dict[str, Any]:
        return {"measure": self.measure, "unit": self.unit, "a": self.a, "b": self.b, "ratio": self.ratio}


@dataclass(frozen=True)
class Target:
    """What a figure group should show, and whether this run showed it."""

    text: str
    met: bool

    def to_dict(self) -> dict[str, Any]:
        return {"text": self.text, "met": self.met}


@dataclass(frozen=True)
class Figure:
    """A figure group: rows of A vs B, a target, and the raw data the plot draws."""

    key: str
    title: str
    a_label: str
    b_label: str
    rows: list[Row]
    target: Target | None
    """None where the brief sets no target: the ratio is reported as measured."""
    data: dict[str, Any] = field(default_factory=dict)
    broker: str | None = None
    """The broker the figure was measured on ("tansu", "kafka", "configured"); None for an offline figure."""

    def row(self, measure: str) -> Row:
        return next(row for row in self.rows if row.measure == measure)

    def to_dict(self) -> dict[str, Any]:
        return {
            "title": self.title,
            "broker": self.broker,
            "a_label": self.a_label,
            "b_label": self.b_label,
            "rows": [row.to_dict() for row in self.rows],
            "target": self.target and self.target.to_dict(),
            "data": self.data,
        }
