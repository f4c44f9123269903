"""Where the bench runs its processes, and the CPU a measured process spends a turn, from /proc."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from turnstream_tools.benchmarks.pinning import (
    PINNED,
    UNPINNED,
    UNPINNED_ONLY,
    CoreSplit,
    CpuSpent,
    affinities,
    apply,
    cpu_ticks,
    cpu_us_per_turn,
    describe,
    parse_cpu_ticks,
    placements,
    process_tree,
    split_cores,
)


@pytest.mark.parametrize(
    ("available", "measured", "others"),
    [
        ({0, 1}, {1}, {0}),
        ([3, 1, 2, 0], {3}, {0, 1, 2}),
        ({4, 7}, {7}, {4}),  # a taskset of two CPUs that are not 0 and 1
    ],
)
def test_the_measured_agent_gets_the_highest_cpu_and_its_neighbours_the_rest(available, measured, others) -> None:
    split = split_cores(available)
    assert split == CoreSplit(frozenset(measured), frozenset(others))
    assert split.every == frozenset(available) and placements(split) == (PINNED, UNPINNED)


@pytest.mark.parametrize("available", [{0}, {5}, set()])
def test_with_one_cpu_pinning_is_impossible_and_the_figures_are_unpinned_only(available) -> None:
    assert split_cores(available) is None
    assert placements(None) == (UNPINNED_ONLY,)
    assert affinities(None, UNPINNED_ONLY, [10], [11, 12]) == {}


def test_pinned_puts_the_measured_process_alone_and_unpinned_gives_everyone_every_cpu() -> None:
    split = CoreSplit(frozenset({1}), frozenset({0}))
    assert affinities(split, PINNED, [10, 13], [11, 12]) == {10: {1}, 13: {1}, 11: {0}, 12: {0}}
    assert affinities(split, UNPINNED, [10], [11, 12]) == {10: {0, 1}, 11: {0, 1}, 12: {0, 1}}


def test_the_title_says_which_cpus_the_pinned_rows_used_or_why_there_are_none() -> None:
    split = CoreSplit(frozenset({3}), frozenset({0, 1, 2}))
    assert "measured agent on CPU 3" in describe(split, True) and "on CPU 0,1,2" in describe(split, True)
    assert describe(None, True) == "drain and freshness unpinned only (one CPU: pinning impossible)"
    assert describe(None, False) == "drain and freshness unpinned only"


# a real line's shape: pid, (comm), state, ppid, pgrp, session, tty, tpgid, flags, minflt, cminflt, majflt,
# cmajflt, utime, stime, cutime, cstime, ...
STAT = "2773 ({comm}) R 2770 2770 322 0 -1 4194304 2846 6505 0 0 {utime} {stime} 9 8 20 0 1 0 1068829 16961536 3357"


@pytest.mark.parametrize("comm", ["python3", "java", "tokio runtime", "a) b (c"])
def test_cpu_ticks_are_utime_plus_stime_whatever_the_command_name(comm: str) -> None:
    # children's times (cutime, cstime: 9 and 8) are not the process's own
    assert parse_cpu_ticks(STAT.format(comm=comm, utime=250, stime=31)) == 281


def test_cpu_a_turn_is_the_ticks_over_the_turns_in_microseconds() -> None:
    assert cpu_us_per_turn(ticks=150, turns=1000, ticks_per_second=100) == pytest.approx(1500.0)
    assert cpu_us_per_turn(ticks=3, turns=0, ticks_per_second=100) == 0.0
    spent = CpuSpent()
    spent.add("pipeline", 40, 400)
    spent.add("pipeline", 60, 600)  # rounds add up before dividing: one tick is 10 ms
    spent.add("count", 1, 1000)
    assert spent.us_per_turn("pipeline") == pytest.approx(cpu_us_per_turn(100, 1000))
    assert spent.us_per_turn("count") == pytest.approx(cpu_us_per_turn(1, 1000))
    assert spent.us_per_turn("set") == 0.0


def test_this_process_reads_its_own_cpu_time_and_can_be_pinned_and_unpinned() -> None:
    available = frozenset(os.sched_getaffinity(0))
    before = cpu_ticks(os.getpid())
    sum(i * i for i in range(2_000_000))  # some CPU for the ticks to count
    assert cpu_ticks(os.getpid()) > before
    split = split_cores(available)
    if split is None:
        pytest.skip("one CPU: nothing to pin")
    try:
        apply(affinities(split, PINNED, [os.getpid()], []))
        assert os.sched_getaffinity(0) == split.measured
    finally:
        apply(affinities(split, UNPINNED, [os.getpid()], []))
    assert os.sched_getaffinity(0) == available
    apply({2**22 + 12345: split.others})  # a process gone is skipped


def test_a_process_tree_holds_the_children_and_their_cpu_counts() -> None:
    child = subprocess.Popen([sys.executable, "-c", "sum(i * i for i in range(3_000_000))"])
    try:
        tree = process_tree(os.getpid())
        assert tree[0] == os.getpid() and child.pid in tree
        assert process_tree(2**22 + 12345) == [2**22 + 12345]  # gone: itself only
        before = cpu_ticks(os.getpid())
        time.sleep(0.3)
        assert cpu_ticks(os.getpid()) > before  # the child's CPU, this process only sleeps
    finally:
        child.kill()
        child.wait()
