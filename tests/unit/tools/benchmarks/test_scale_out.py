"""Scale-out: where each worker runs, the machine's busy share, and the figure's shape."""

from __future__ import annotations

import statistics

import pytest

from turnstream.settings import Settings
from turnstream_tools.benchmarks.pinning import TICKS_PER_SECOND
from turnstream_tools.benchmarks.scale_out import (
    TARGET_RATIO,
    ScalePlacement,
    Side,
    parse_machine_ticks,
    scale_figure,
    scale_placement,
)


def test_two_cores_give_each_worker_one_and_the_others_share_both() -> None:
    placement = scale_placement({0, 1}, 2)
    assert placement == ScalePlacement((frozenset({0}), frozenset({1})), frozenset({0, 1}))
    assert placement.shared
    assert "share them" in placement.describe()


def test_spare_cores_go_to_the_broker_redis_and_the_bench() -> None:
    placement = scale_placement([3, 0, 2, 1], 2)
    assert placement == ScalePlacement((frozenset({2}), frozenset({3})), frozenset({0, 1}))
    assert not placement.shared
    assert "CPU 0,1" in placement.describe()
    assert scale_placement({5}, 2) is None


def test_the_machine_busy_ticks_leave_out_idle_and_iowait() -> None:
    stat = "cpu  100 5 50 800 40 3 2 0 0 0\ncpu0 50 2 25 400 20 1 1 0 0 0\n"
    assert parse_machine_ticks(stat) == (160, 1000)


def _side(rates: list[float], seconds: float, ticks: dict[str, int]) -> Side:
    return Side(Settings(), [1], rates, turns=4800 * len(rates), ticks=ticks, busy=150, total=200, seconds=seconds)


@pytest.mark.parametrize(("two", "met"), [([1900.0, 2000.0, 1800.0], True), ([1500.0, 1600.0], False)])
def test_the_figure_is_two_workers_turns_per_second_over_one_and_the_cpu_beside(two: list[float], met: bool) -> None:
    one = _side([1000.0, 1000.0, 1100.0], 10.0, {"workers": 10 * TICKS_PER_SECOND, "redis": TICKS_PER_SECOND // 2})
    both = _side(two, 5.0, {"workers": 9 * TICKS_PER_SECOND, "redis": TICKS_PER_SECOND})
    placement = scale_placement({0, 1}, 2)
    figure = scale_figure(one, both, ["tansu", "redis"], placement, 4800)
    rate = figure.rows[0]
    assert (rate.unit, rate.b, rate.a) == ("turns/s", 1000.0, statistics.median(two))
    assert figure.target is not None and figure.target.met is met and f"{TARGET_RATIO:g}×" in figure.target.text
    assert [row.measure for row in figure.rows[1:]] == [
        "workers CPU while draining",
        "tansu CPU while draining",
        "redis CPU while draining",
        "bench CPU while draining",
        "machine busy while draining (every process)",
        "turns per second of worker CPU",
    ]
    assert figure.row("workers CPU while draining").a == 180.0 and figure.row("workers CPU while draining").b == 100.0
    assert figure.row("redis CPU while draining").a == 20.0
    assert figure.row("machine busy while draining (every process)").a == 75.0
    per_core = figure.row("turns per second of worker CPU")
    assert (per_core.a, per_core.b) == (pytest.approx(4800 * len(two) / 9, rel=1e-3), 4800 * 3 / 10)
    assert figure.data["cores_shared"] and figure.data["turns_per_round"] == 4800
