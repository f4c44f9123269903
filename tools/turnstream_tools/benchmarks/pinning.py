"""Where the bench's processes run while it measures one of them, and the CPU time that one spends.

Pinned: the measured agent (a worker or a yardstick) alone on one core, the broker, Redis, the bench itself
(the producers and the waiters) and the idle consumers on the others, so a figure measures the agent rather
than its neighbours. Unpinned: every process on every core the bench may use, as the scheduler likes.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

PINNED, UNPINNED, UNPINNED_ONLY = "pinned", "unpinned", "unpinned only"
"""How a row names where its processes ran; "unpinned only" where pinning was not possible or not asked for."""


@dataclass(frozen=True)
class CoreSplit:
    """The measured agent's cores and its neighbours' cores: disjoint, neither empty."""

    measured: frozenset[int]
    others: frozenset[int]

    @property
    def every(self) -> frozenset[int]:
        return self.measured | self.others

    def to_dict(self) -> dict[str, list[int]]:
        return {"measured": sorted(self.measured), "others": sorted(self.others)}


def split_cores(available: Iterable[int]) -> CoreSplit | None:
    """The highest-numbered CPU for the measured agent (CPU 0 takes most interrupts), the rest for its
    neighbours; None with fewer than two CPUs, where pinning is impossible."""
    cpus = sorted(set(available))
    if len(cpus) < 2:
        return None
    return CoreSplit(frozenset(cpus[-1:]), frozenset(cpus[:-1]))


def describe(split: CoreSplit | None, asked: bool) -> str:
    """Which row is which, for the table's title."""
    if split is None:
        return "drain and freshness unpinned only" + (" (one CPU: pinning impossible)" if asked else "")
    measured, others = (",".join(map(str, sorted(cpus))) for cpus in (split.measured, split.others))
    return f"pinned rows: the measured agent on CPU {measured}, broker, Redis, producers and idle consumers on CPU {others}"


def chosen_split(pin: bool) -> CoreSplit | None:
    """The split of the CPUs this process may use when pinning is asked for; else None."""
    return split_cores(os.sched_getaffinity(0)) if pin else None


def placements(split: CoreSplit | None) -> tuple[str, ...]:
    """The placements a figure measures, in order: pinned then unpinned, or unpinned only without a split."""
    return (PINNED, UNPINNED) if split is not None else (UNPINNED_ONLY,)


def affinities(
    split: CoreSplit | None, placement: str, measured: Iterable[int], neighbours: Iterable[int]
) -> dict[int, frozenset[int]]:
    """pid -> the CPUs it may run on under `placement` (the measured agent's processes, its neighbours'); empty
    without a split (nothing is ever pinned then)."""
    if split is None:
        return {}
    pinned = placement == PINNED
    out = {pid: split.others if pinned else split.every for pid in neighbours}
    out.update({pid: split.measured if pinned else split.every for pid in measured})
    return out


def process_tree(pid: int) -> list[int]:
    """`pid` and every process below it (a worker's embedding process), read from /proc; [pid] once it is gone."""
    tree, todo = [], [pid]
    while todo:
        tree.append(parent := todo.pop())
        try:
            threads = os.listdir(f"/proc/{parent}/task")
        except FileNotFoundError:
            continue
        for tid in threads:
            try:
                todo += [int(child) for child in Path(f"/proc/{parent}/task/{tid}/children").read_text().split()]
            except FileNotFoundError:
                pass
    return tree


def apply(affinity: dict[int, frozenset[int]]) -> None:
    """Give every thread of each process its CPUs: an affinity is a thread's own, and a new thread inherits its
    creator's, so the JVM's and Tansu's threads started later follow too. A thread or process gone meanwhile is
    skipped."""
    for pid, cpus in affinity.items():
        try:
            threads = [int(tid) for tid in os.listdir(f"/proc/{pid}/task")]
        except FileNotFoundError:
            continue
        for tid in threads:
            try:
                os.sched_setaffinity(tid, cpus)
            except ProcessLookupError:
                pass


def parse_cpu_ticks(stat: str) -> int:
    """utime + stime, in clock ticks, of a /proc/<pid>/stat line (every thread of the process). The command
    name, field 2, is in parentheses and may hold spaces and parentheses itself: the fields after its last ')'
    start at field 3."""
    fields = stat[stat.rindex(")") + 1 :].split()
    return int(fields[14 - 3]) + int(fields[15 - 3])


def cpu_ticks(pid: int, below: bool = True) -> int:
    """The CPU time process `pid` and (unless `below` is False) the processes below it (a worker's embedding
    process) have spent so far, user and system, in clock ticks."""
    spent = 0
    for process in process_tree(pid) if below else [pid]:
        try:
            spent += parse_cpu_ticks(Path(f"/proc/{process}/stat").read_text())
        except FileNotFoundError:  # a child gone meanwhile
            pass
    return spent


def parse_rss_mb(status: str) -> float:
    """The resident set size in a /proc/<pid>/status text, in MB."""
    for line in status.splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise ValueError("no VmRSS line (a zombie, or not Linux's /proc)")


def rss_mb(pid: int) -> float:
    """Resident set size of process `pid`, in MB (Linux)."""
    return parse_rss_mb(Path(f"/proc/{pid}/status").read_text())


def tree_rss_mb(pid: int) -> float:
    """The resident set size of `pid` and the processes below it (a worker's embedding process), in MB."""
    total = 0.0
    for process in process_tree(pid):
        try:
            total += rss_mb(process)
        except (FileNotFoundError, ValueError):  # a child gone meanwhile
            pass
    return total


TICKS_PER_SECOND = os.sysconf("SC_CLK_TCK")


def cpu_us_per_turn(ticks: int, turns: int, ticks_per_second: int = TICKS_PER_SECOND) -> float:
    """µs of CPU a turn from `ticks` spent over intervals that carried `turns` turns; 0 without turns. A tick
    is 10 ms at the usual 100 a second: sum ticks over every round before dividing."""
    return ticks / ticks_per_second * 1e6 / turns if turns > 0 else 0.0


@dataclass
class CpuSpent:
    """Per side, the CPU ticks its process spent over the intervals measured, and the turns they carried."""

    ticks: dict[str, int] = field(default_factory=dict)
    turns: dict[str, int] = field(default_factory=dict)

    def add(self, side: str, ticks: int, turns: int) -> None:
        self.ticks[side] = self.ticks.get(side, 0) + ticks
        self.turns[side] = self.turns.get(side, 0) + turns

    def us_per_turn(self, side: str) -> float:
        return cpu_us_per_turn(self.ticks.get(side, 0), self.turns.get(side, 0))
