"""Figure 1: drain rate, turns/s from the first produce until every context is current, vs a counting agent;
and where a turn's time goes in the worker, at the default batch size and at one event a batch."""

from __future__ import annotations

import statistics
import time
from typing import Any, Callable

from turnstream.benchmarks.figures import Figure, Row, Target, abba, rounded
from turnstream.benchmarks.live import Live, encode, last_versions, round_turns
from turnstream.benchmarks.stages import Scrape, per_turn_us
from turnstream.settings import Settings

TARGET = 0.5


async def drain_rate(live: Live, rounds: int, sessions: int, turns: int, progress: Callable[[str], None]) -> Figure:
    """For each worker, rounds of fresh conversations produced at full speed to it and, the same bytes, to the
    counting agent; the worker's stage histograms are read before and after each of its rounds."""
    rows, data = [], {}
    batch: list[dict[str, Any]] = []
    for worker in (live.pipeline, live.single):
        size = worker.batch_max_events
        rates, stages, wall, last = await _rounds(live, worker, rounds, sessions, turns, progress)
        measure = f"drain rate at {size} events a batch" + (" (the default)" if worker is live.pipeline else "")
        rows.append(Row.of(measure, "turns/s", statistics.median(rates["pipeline"]), statistics.median(rates["count"])))
        shares = {name: rounded(value) for name, value in per_turn_us(stages, wall).items()}
        data[str(size)] = {"rounds": rates, "stages_us_per_turn": shares}
        batch = batch or last  # the default worker's last round: the reads figure reads its contexts
    met = (rows[0].ratio or 0.0) >= TARGET
    return Figure("drain", "1 Drain rate", "pipeline", "count-only agent", rows, Target(f"ratio ≥ {TARGET} (the default batch)", met),
                  {"batch_sizes": data, "turns_per_round": len(batch), "sessions": sessions,
                   "last_session": {"session_id": batch[-1]["session_id"], "user_id": batch[-1]["user_id"]}})


async def _rounds(
    live: Live, worker: Settings, rounds: int, sessions: int, turns: int, progress: Callable[[str], None]
) -> tuple[dict[str, list[float]], Scrape, float, list[dict[str, Any]]]:
    """(rates of both sides, the worker's stage histograms over its rounds, the wall seconds of its rounds,
    the last round's turns)."""
    rates: dict[str, list[float]] = {"pipeline": [], "count": []}
    stages, wall = Scrape(), 0.0
    size = worker.batch_max_events
    for index, pipeline_first in abba(rounds):
        batch = round_turns(f"drain{size}-{index}", sessions, turns, seed=index)
        records = encode(batch)
        for side in ("pipeline", "count") if pipeline_first else ("count", "pipeline"):
            if side == "pipeline":
                done = live.versions_reached(last_versions(batch), worker)
                target = worker
                before = await live.stages(worker)
            else:
                done = live.counted(await live.count_now() + len(records))
                target = live.count
            started = time.perf_counter()
            await live.send(target, records)
            await live.producer.flush()
            await live.until(done, f"drain round {index + 1} ({side}, {size} a batch)")
            elapsed = time.perf_counter() - started
            rates[side].append(len(records) / elapsed)
            if side == "pipeline":
                stages, wall = stages + (await live.stages(worker) - before), wall + elapsed
            progress(f"drain round {index + 1}/{rounds}, {size} a batch: {side} {rates[side][-1]:,.0f} turns/s")
    return rates, stages, wall, batch
