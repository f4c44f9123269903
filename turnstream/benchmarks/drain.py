"""Figure 1: drain rate, turns/s from the first produce until every context is current, vs a counting agent."""

from __future__ import annotations

import statistics
import time
from typing import Callable

from turnstream.benchmarks.figures import Figure, Row, Target, abba
from turnstream.benchmarks.live import Live, encode, last_versions, round_turns

TARGET = 0.5


async def drain_rate(live: Live, rounds: int, sessions: int, turns: int, progress: Callable[[str], None]) -> Figure:
    """Each round produces fresh conversations at full speed to the worker and, the same bytes, to the counting agent."""
    rates: dict[str, list[float]] = {"pipeline": [], "count": []}
    for index, pipeline_first in abba(rounds):
        batch = round_turns(f"drain{index}", sessions, turns, seed=index)
        records = encode(batch)
        for side in ("pipeline", "count") if pipeline_first else ("count", "pipeline"):
            if side == "pipeline":
                done = live.versions_reached(last_versions(batch))
                target = live.pipeline
            else:
                done = live.counted(await live.count_now() + len(records))
                target = live.count
            started = time.perf_counter()
            await live.send(target, records)
            await live.producer.flush()
            await live.until(done, f"drain round {index + 1} ({side})")
            rates[side].append(len(records) / (time.perf_counter() - started))
            progress(f"drain round {index + 1}/{rounds}: {side} {rates[side][-1]:,.0f} turns/s")
    row = Row.of("drain rate, median of rounds", "turns/s", statistics.median(rates["pipeline"]), statistics.median(rates["count"]))
    met = (row.ratio or 0.0) >= TARGET
    return Figure("drain", "1 Drain rate", "pipeline", "count-only agent", [row], Target(f"ratio ≥ {TARGET}", met),
                  {"rounds": rates, "turns_per_round": len(records), "sessions": sessions,
                   "last_session": {"session_id": batch[-1]["session_id"], "user_id": batch[-1]["user_id"]}})
