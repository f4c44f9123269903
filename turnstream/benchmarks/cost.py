"""Figure 6: incremental compaction cost of one turn late in a session against early in it (pure, interleaved)."""

from __future__ import annotations

import statistics
import time
from typing import Any

from turnstream.benchmarks.figures import Figure, Row, Target, abba
from turnstream.compaction import SessionCompactor
from turnstream.compaction.strategies import build_strategy
from turnstream.samples.conversations import generate_conversations, steps
from turnstream.settings import Settings

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
    """Seconds of one append() + result(), as the worker pays per turn, at turn ~`late` vs ~`early`.

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
    samples: dict[str, list[float]] = {"late": [], "early": []}
    for index, late_first in abba(len(new_turns)):
        order = (("late", late_session), ("early", early_session))
        for name, session in order if late_first else order[::-1]:
            started = time.perf_counter()
            session.append(new_turns[index])
            session.result()
            samples[name].append((time.perf_counter() - started) * 1e6)
    rows = [
        Row.of("median per turn", "µs", statistics.median(samples["late"]), statistics.median(samples["early"])),
        Row.of("mean per turn", "µs", statistics.fmean(samples["late"]), statistics.fmean(samples["early"])),
    ]
    median_ratio = rows[0].ratio or 0.0
    return Figure("append_cost", "Compaction cost per turn", f"turn ~{late:,}", f"turn ~{early:,}", rows,
                  Target(f"median ratio ≤ {TARGET}", median_ratio <= TARGET), {"rounds": len(new_turns), "budget_tokens": BUDGET_TOKENS})
