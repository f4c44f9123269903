"""Scale-out (`turnstream bench --scale-out`): the same backlog drained by one worker and by two workers of one
group, in one run, rounds in ABBA order.

Each round's backlog is written while the side's workers are stopped (SIGSTOP, well within the group's session
timeout), so the clock runs from SIGCONT until every context is current: a drain of a backlog, not of the bench's
producer. Each worker is pinned to a core of its own; with no core left over, the broker, Redis and the bench share
the workers' cores, and their CPU share while draining is measured beside the workers'.
"""

from __future__ import annotations

import asyncio
import os
import signal
import statistics
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from aiokafka.admin import AIOKafkaAdminClient

from turnstream.connections import kafka_options
from turnstream.kafka.admin import ensure_topics, faust_app_id
from turnstream.settings import Settings
from turnstream.stack.services import free_port
from turnstream_tools.benchmarks.children import Children
from turnstream_tools.benchmarks.figures import Figure, Row, Target, abba
from turnstream_tools.benchmarks.live import (
    READY_TIMEOUT_SECONDS,
    WARM_UP_TURNS,
    Consumers,
    Live,
    encode,
    last_versions,
    round_turns,
)
from turnstream_tools.benchmarks.pinning import TICKS_PER_SECOND, apply, cpu_ticks, process_tree
from turnstream_tools.benchmarks.suite import Plan

TARGET_RATIO = 1.8
SESSIONS_PER_DRAIN_SESSION = 4
"""The backlog spreads the drain figure's turns over this many times its sessions: many sessions on every
partition, so two workers share the work about evenly."""
SIDES = ("one worker", "two workers")
GROUP_POLL_SECONDS = 0.5


@dataclass(frozen=True)
class ScalePlacement:
    """A core for each worker, and the cores of everything else (the broker, Redis, the bench, idle workers)."""

    workers: tuple[frozenset[int], ...]
    others: frozenset[int]

    @property
    def shared(self) -> bool:
        """No core left over: the broker, Redis and the bench run on the workers' cores."""
        return bool(self.others & frozenset().union(*self.workers))

    def describe(self) -> str:
        cores = ", ".join(f"CPU {min(each)}" for each in self.workers)
        if self.shared:
            return (
                f"each worker on a core of its own ({cores}); with {len(self.others)} cores, the broker, Redis and "
                "the bench share them"
            )
        return (
            f"each worker on a core of its own ({cores}); the broker, Redis and the bench on CPU {_cpus(self.others)}"
        )


def _cpus(cores: Iterable[int]) -> str:
    return ",".join(map(str, sorted(cores)))


def scale_placement(available: Iterable[int], workers: int) -> ScalePlacement | None:
    """The highest-numbered CPUs, one a worker; the rest (or, with none left over, every CPU) for the others;
    None with fewer CPUs than workers."""
    cpus = sorted(set(available))
    if len(cpus) < workers:
        return None
    rest = frozenset(cpus[: len(cpus) - workers])
    return ScalePlacement(tuple(frozenset([cpu]) for cpu in cpus[len(cpus) - workers :]), rest or frozenset(cpus))


def parse_machine_ticks(stat: str) -> tuple[int, int]:
    """(busy, total) clock ticks of every CPU from /proc/stat's first line (idle and iowait are not busy)."""
    fields = [int(value) for value in stat.splitlines()[0].split()[1:]]
    return sum(fields) - fields[3] - fields[4], sum(fields)


def machine_ticks() -> tuple[int, int]:
    return parse_machine_ticks(Path("/proc/stat").read_text())


@dataclass
class Side:
    """One side's workers and what its rounds measured: turns/s, and per process group the CPU ticks it spent
    over the seconds the rounds drained."""

    settings: Settings
    pids: list[int]
    rates: list[float] = field(default_factory=list)
    turns: int = 0
    ticks: dict[str, int] = field(default_factory=dict)
    busy: int = 0
    total: int = 0
    seconds: float = 0.0

    def share(self, name: str) -> float:
        """Percent of one core `name` kept busy while this side drained."""
        return 100 * self.ticks.get(name, 0) / TICKS_PER_SECOND / self.seconds if self.seconds else 0.0

    def per_core(self) -> float:
        """Turns drained per second of the workers' CPU time, over every round."""
        spent = self.ticks.get("workers", 0) / TICKS_PER_SECOND
        return self.turns / spent if spent else 0.0

    def machine(self) -> float:
        """Percent of the whole machine (every process, this run's or not) busy while this side drained."""
        return 100 * self.busy / self.total if self.total else 0.0


def scale_figure(one: Side, two: Side, services: Iterable[str], placement: ScalePlacement | None, turns: int) -> Figure:
    """Two workers' turns/s beside one worker's (the ratio held to TARGET_RATIO), then the CPU each process group
    spent while each side drained."""
    rate = Row.of("drain rate, same backlog", "turns/s", statistics.median(two.rates), statistics.median(one.rates))
    rows = [rate]
    for name in ("workers", *services, "bench"):  # the bench: its producer and its waits on the contexts
        rows.append(Row.of(f"{name} CPU while draining", "% of a core", two.share(name), one.share(name)))
    rows.append(Row.of("machine busy while draining (every process)", "%", two.machine(), one.machine()))
    # turns a second over the cores the workers got: how well the work divides, whatever the machine left them
    rows.append(Row.of("turns per second of worker CPU", "turns/s", two.per_core(), one.per_core()))
    return Figure(
        "scale_out",
        "Scale-out: one worker and two, the same backlog",
        "two workers",
        "one worker",
        rows,
        Target(
            f"two workers ≥ {TARGET_RATIO:g}× one worker's turns/s",
            rate.ratio is not None and rate.ratio >= TARGET_RATIO,
        ),
        {
            "turns_per_round": turns,
            "rounds": {SIDES[0]: one.rates, SIDES[1]: two.rates},
            "placement": placement.describe() if placement else "unpinned (--no-pin, or fewer CPUs than workers)",
            "cores_shared": placement is not None and placement.shared,
        },
    )


def run_scale_out(settings: Settings, plan: Plan, children: Children, progress: Callable[[str], None]) -> Figure:
    """A worker on a prefix of its own, two workers of one group on another; the same backlogs through each."""
    prefix = settings.topic_prefix
    one = settings.model_copy(update={"topic_prefix": f"{prefix}-one", "metrics_port": free_port()})
    two = settings.model_copy(update={"topic_prefix": f"{prefix}-two"})
    for each in (one, two):
        asyncio.run(ensure_topics(each))
    sides = (
        Side(one, [children.worker(one, "worker-one").process.pid]),
        Side(
            two,
            [
                children.worker(two.model_copy(update={"metrics_port": free_port()}), f"worker-two-{n}").process.pid
                for n in (1, 2)
            ],
        ),
    )
    progress("scale-out: one worker and two workers starting")
    return asyncio.run(_scale_out(sides, plan, children, progress))


async def _group_of(settings: Settings, members: int) -> None:
    """Wait until the worker group on `settings` is stable with `members` members: no rebalance left to come."""
    admin = AIOKafkaAdminClient(**kafka_options(settings))
    await admin.start()
    try:
        deadline = time.monotonic() + READY_TIMEOUT_SECONDS
        while time.monotonic() < deadline:
            for response in await admin.describe_consumer_groups([faust_app_id(settings)]):
                for group in response.groups:
                    state, joined = group[2], group[5]
                    if state == "Stable" and len(joined) == members:
                        return
            await asyncio.sleep(GROUP_POLL_SECONDS)
    finally:
        await admin.close()
    raise TimeoutError(f"the group of {settings.topic_prefix} not stable with {members} members")


def _signal(pids: Iterable[int], signum: signal.Signals) -> None:
    for pid in pids:
        try:
            os.kill(pid, signum)
        except ProcessLookupError:
            pass


async def _scale_out(
    sides: tuple[Side, Side], plan: Plan, children: Children, progress: Callable[[str], None]
) -> Figure:
    one, two = sides
    live = await Live.connect(Consumers(one.settings, one.settings, one.settings, one.settings), children)
    sessions = plan.drain_sessions * SESSIONS_PER_DRAIN_SESSION
    turns = max(plan.drain_turns // SESSIONS_PER_DRAIN_SESSION, 1)
    placement = scale_placement(os.sched_getaffinity(0), len(two.pids)) if plan.pin else None
    every = frozenset(os.sched_getaffinity(0))
    try:
        warm = round_turns("scale-warm-up", sessions, WARM_UP_TURNS // 10, seed=99)
        for side in sides:
            await live.send(side.settings, encode(warm))
        for side in sides:
            await live.until(
                live.versions_reached(last_versions(warm), side.settings), "scale-out warm-up", READY_TIMEOUT_SECONDS
            )
        await _group_of(two.settings, len(two.pids))
        progress(f"scale-out: workers ready; {placement.describe() if placement else 'unpinned'}")
        for index, first in abba(plan.drain_rounds):
            batch = round_turns(f"scale-{index}", sessions, turns, seed=index)
            records = encode(batch)
            for side in sides if first else sides[::-1]:
                await _drain(live, side, sides, records, last_versions(batch), placement)
                progress(
                    f"scale-out round {index + 1}/{plan.drain_rounds}: {SIDES[sides.index(side)]} "
                    f"{side.rates[-1]:,.0f} turns/s"
                )
    finally:
        apply({pid: every for side in sides for pid in _trees(side.pids)})
        await live.aclose()
    return scale_figure(one, two, children.services, placement, len(batch))


def _trees(pids: Iterable[int]) -> list[int]:
    return [each for pid in pids for each in process_tree(pid)]


async def _drain(
    live: Live,
    side: Side,
    sides: tuple[Side, Side],
    records: list[tuple[bytes, bytes]],
    expected: dict[str, int],
    placement: ScalePlacement | None,
) -> None:
    """`records` written while `side`'s workers are stopped, then timed from their SIGCONT until drained."""
    if placement is not None:
        idle = [pid for other in sides if other is not side for pid in _trees(other.pids)]
        others = [*idle, *live.children.services.values(), os.getpid()]
        affinity = {pid: placement.others for pid in others}
        for pid, cores in zip(side.pids, placement.workers[-len(side.pids) :]):
            affinity.update({each: cores for each in process_tree(pid)})
        apply(affinity)
    stopped = _trees(side.pids)
    _signal(stopped, signal.SIGSTOP)
    try:
        await live.send(side.settings, records)
        await live.producer.flush()
    finally:
        _signal(stopped, signal.SIGCONT)
    groups = {"workers": side.pids, **{name: [pid] for name, pid in live.children.services.items()}}

    def spent() -> dict[str, int]:
        # the bench alone: every other process here is below it
        return {"bench": cpu_ticks(os.getpid(), below=False)} | {
            name: sum(cpu_ticks(pid) for pid in pids) for name, pids in groups.items()
        }

    before = spent()
    busy, total = machine_ticks()
    started = time.perf_counter()
    await live.until(live.versions_reached(expected, side.settings), f"scale-out drain ({len(side.pids)} workers)")
    elapsed = time.perf_counter() - started
    after_busy, after_total = machine_ticks()
    for name, ticks in spent().items():
        side.ticks[name] = side.ticks.get(name, 0) + ticks - before[name]
    side.busy, side.total = side.busy + after_busy - busy, side.total + after_total - total
    side.seconds += elapsed
    side.rates.append(len(records) / elapsed)
    side.turns += len(records)
