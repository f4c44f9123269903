"""Figure 1: drain rate, turns/s from the first produce until every context is current, vs a counting agent,
pinned and unpinned; the CPU each side's process spends a turn; and where a turn's time goes in the worker, at
the default batch size and at one event a batch."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from turnstream.settings import Settings
from turnstream_tools.benchmarks.figures import Figure, Row, Target, abba, rounded
from turnstream_tools.benchmarks.live import Live, encode, last_versions, round_turns
from turnstream_tools.benchmarks.pinning import CoreSplit, CpuSpent, cpu_ticks, placements
from turnstream_tools.benchmarks.stages import Scrape, per_turn_us

CPU_TARGET = 3.0
"""The worker's CPU a turn at the default batch, pinned, at most this many times the counting agent's. The drain
ratio itself is reported without a target: it retired (tools/turnstream_tools/benchmarks/README.md, figure 1)."""
SIDES = ("pipeline", "count")
SINGLE_EVENT_SESSIONS_SHARE = 2
"""The one-event worker drains this fraction of the sessions (whole, so they compact as the default's do): it runs at
a seventh of the default's rate, and its stage table, what that figure is for, settles long before."""


@dataclass
class Measured:
    """One worker's rounds under one placement: both sides' rates, the worker's stage histograms and wall
    seconds, and the CPU both sides' processes spent."""

    rates: dict[str, list[float]] = field(default_factory=lambda: {side: [] for side in SIDES})
    stages: Scrape = field(default_factory=Scrape)
    wall: float = 0.0
    cpu: CpuSpent = field(default_factory=CpuSpent)

    def to_dict(self) -> dict[str, Any]:
        return {
            "rounds": self.rates,
            "stages_us_per_turn": {name: rounded(value) for name, value in per_turn_us(self.stages, self.wall).items()},
            "cpu_us_per_turn": {side: rounded(self.cpu.us_per_turn(side)) for side in SIDES},
        }


async def drain_rate(
    live: Live,
    rounds: int,
    sessions: int,
    turns: int,
    progress: Callable[[str], None],
    split: CoreSplit | None = None,
) -> Figure:
    """For each worker, rounds of fresh conversations produced at full speed to it and, the same bytes, to the
    counting agent, under each placement (pinned to `split`'s cores, then unpinned); the worker's stage
    histograms are read before and after each of its rounds, each side's CPU time before and after each."""
    rows, data = [], {}
    batch: list[dict[str, Any]] = []
    for worker in (live.pipeline, live.single):
        size = worker.batch_max_events
        share = 1 if worker is live.pipeline else SINGLE_EVENT_SESSIONS_SHARE
        measured, last = await _rounds(live, worker, rounds, max(sessions // share, 1), turns, progress, split)
        name = f"{size} a batch" + (" (default)" if worker is live.pipeline else "")
        for placement, each in measured.items():
            rows.append(
                Row.of(
                    f"drain rate, {name}, {placement}",
                    "turns/s",
                    statistics.median(each.rates["pipeline"]),
                    statistics.median(each.rates["count"]),
                )
            )
        for placement, each in measured.items():
            rows.append(
                Row.of(
                    f"CPU a turn, {name}, {placement}",
                    "µs",
                    each.cpu.us_per_turn("pipeline"),
                    each.cpu.us_per_turn("count"),
                )
            )
        data[str(size)] = {placement: each.to_dict() for placement, each in measured.items()}
        batch = batch or last  # the default worker's last round: the reads figure reads its contexts
    cpu = next(row for row in rows if row.measure.startswith("CPU a turn, ") and "(default)" in row.measure)
    return Figure(
        "drain",
        "1 Drain rate",
        "pipeline",
        "count-only agent",
        rows,
        Target(
            f"CPU a turn ≤ {CPU_TARGET:g}× at the default batch, {placements(split)[0]}; drain rate reported",
            cpu_met(cpu),
        ),
        {
            "batch_sizes": data,
            "cores": split and split.to_dict(),
            "turns_per_round": len(batch),
            "sessions": sessions,
            "last_session": {"session_id": batch[-1]["session_id"], "user_id": batch[-1]["user_id"]},
        },
    )


def cpu_met(row: Row) -> bool:
    """The worker's CPU a turn within CPU_TARGET times the counting agent's (a yardstick that spent nothing
    measurable meets nothing)."""
    return row.ratio is not None and row.ratio <= CPU_TARGET


async def _rounds(
    live: Live,
    worker: Settings,
    rounds: int,
    sessions: int,
    turns: int,
    progress: Callable[[str], None],
    split: CoreSplit | None,
) -> tuple[dict[str, Measured], list[dict[str, Any]]]:
    """(per placement, what its rounds measured; the last round's turns). The placements go ABBA from round to
    round, and the sides from one placement's round to the next, so each placement sees both sides first alike."""
    size = worker.batch_max_events
    order = placements(split)
    measured = {placement: Measured() for placement in order}
    batch: list[dict[str, Any]] = []
    for index, first in abba(rounds):
        for step, placement in enumerate(order if first else order[::-1], start=index * len(order)):
            each = measured[placement]
            batch = round_turns(f"drain{size}-{order.index(placement)}-{index}", sessions, turns, seed=index)
            records = encode(batch)
            for side in SIDES if step % 2 == 0 else SIDES[::-1]:
                target = worker if side == "pipeline" else live.count
                if side == "pipeline":
                    done = live.versions_reached(last_versions(batch), worker)
                    before = await live.stages(worker)
                else:
                    done = live.counted(await live.count_now() + len(records))
                pid = live.place(split, placement, target)
                ticks, started = cpu_ticks(pid), time.perf_counter()
                await live.send(target, records)
                await live.producer.flush()
                await live.until(done, f"drain round {index + 1} ({side}, {size} a batch, {placement})")
                elapsed = time.perf_counter() - started
                each.cpu.add(side, cpu_ticks(pid) - ticks, len(records))
                each.rates[side].append(len(records) / elapsed)
                if side == "pipeline":
                    each.stages, each.wall = each.stages + (await live.stages(worker) - before), each.wall + elapsed
                progress(
                    f"drain round {index + 1}/{rounds}, {size} a batch, {placement}: {side} {each.rates[side][-1]:,.0f} turns/s"
                )
    return measured, batch
