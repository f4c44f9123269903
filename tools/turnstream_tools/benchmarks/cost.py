"""Figure 6: incremental compaction cost of one turn late in a session against early in it (pure, interleaved)."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from typing import Any

from turnstream.compaction.incremental import SessionCompactor
from turnstream.compaction.strategies.offline import build_strategy
from turnstream.settings import Settings
from turnstream_tools.benchmarks.figures import Figure, Row, Target, interleaved
from turnstream_tools.samples.conversations import generate_conversations, steps

EARLY, LATE = 100, 5000
BUDGET_TOKENS = 1500
"""Small enough that a session is already compacting at turn 100, so both positions do the same kind of work."""
TARGET = 1.3


def _whole_steps(messages: list[dict[str, Any]], count: int) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """About `count` messages cut after a whole step (no call waiting for results), and the steps after them."""
    head: list[dict[str, Any]] = []
    cut = steps(messages)
    while cut and len(head) < count:
        head.extend(cut.pop(0))
    return head, [m for step in cut for m in step]


def append_cost(rounds: int, early: int = EARLY, late: int = LATE, seed: int = 0) -> Figure:
    """Microseconds of one append() + result(), as the worker pays per turn, at turn ~`late` vs ~`early`.

    Both sessions get the same new turns, one after the other in ABBA order, so they differ only in what
    they have seen and machine noise hits both alike. Median and mean: the mean shows the strategy folds,
    which only some appends trigger.
    """
    settings = Settings()
    [conversation] = generate_conversations(1, late + rounds * 2 + 200, seed)
    sessions = []
    new_turns: list[dict[str, Any]] = []
    for position in (late, early):  # the late cut decides which turns are new to both
        seen, rest = _whole_steps(conversation.messages, position)
        new_turns = new_turns or rest[:rounds]
        session = SessionCompactor(BUDGET_TOKENS, strategy=build_strategy(settings, archive=False))
        for message in seen:
            session.append(message)
        sessions.append(session)
    late_session, early_session = sessions
    late_us, early_us = interleaved(
        timed_appends(late_session, new_turns), timed_appends(early_session, new_turns), len(new_turns)
    )
    rows = [
        Row.of("median per turn", "µs", statistics.median(late_us), statistics.median(early_us)),
        Row.of("mean per turn", "µs", statistics.fmean(late_us), statistics.fmean(early_us)),
    ]
    median_ratio = rows[0].ratio or 0.0
    return Figure(
        "append_cost",
        "6 Compaction cost per turn",
        f"turn ~{late:,}",
        f"turn ~{early:,}",
        rows,
        Target(f"median ratio ≤ {TARGET}", median_ratio <= TARGET),
        {"rounds": len(new_turns), "budget_tokens": BUDGET_TOKENS},
    )


def timed_appends(session: SessionCompactor, turns: list[dict[str, Any]]) -> Callable[[], float]:
    """Each call appends the next of `turns` and builds the result, as the worker does per turn; µs taken."""
    upcoming = iter(turns)

    def run() -> float:
        message = next(upcoming)
        started = time.perf_counter()
        session.append(message)
        session.result()
        return (time.perf_counter() - started) * 1e6

    return run
