"""The bench's pure helpers: rounding, ratios, percentiles, ABBA interleaving, rows and the report."""

from __future__ import annotations

import math
from pathlib import Path

import orjson
import pytest
from rich.console import Console

from turnstream_tools.benchmarks.drain import cpu_met
from turnstream_tools.benchmarks.figures import Figure, Row, Target, abba, interleaved, p50_p99, ratio, rounded
from turnstream_tools.benchmarks.freshness import freshness_met
from turnstream_tools.benchmarks.report import (
    FRESH_COLUMNS,
    FRESH_TITLE,
    STAGE_TITLE,
    TABLE_WIDTH,
    print_stages,
    print_table,
    write_json,
)


@pytest.mark.parametrize(
    ("value", "expected"),
    [(123456.7, 123500.0), (0.000123456, 0.0001235), (899.34, 899.3), (1.0, 1.0), (0.0, 0.0), (143823, 143823)],
)
def test_rounded_keeps_four_significant_digits_and_integers_whole(value: float, expected: float) -> None:
    assert rounded(value) == expected
    assert type(rounded(value)) is type(value)


def test_ratio_of_nothing_is_none() -> None:
    assert ratio(3.0, 2.0) == 1.5
    assert ratio(3.0, 0.0) is None


def test_a_row_ratio_is_the_quotient_of_its_printed_figures() -> None:
    row = Row.of("p99", "ms", 0.77561, 0.40004)
    assert (row.a, row.b) == (0.7756, 0.4)
    assert row.ratio == row.a / row.b
    assert row.to_dict() == {"measure": "p99", "unit": "ms", "a": 0.7756, "b": 0.4, "ratio": row.a / row.b}


def test_p50_p99_interpolate() -> None:
    p50, p99 = p50_p99([float(v) for v in range(1, 101)])
    assert p50 == pytest.approx(50.5)
    assert p99 == pytest.approx(99.01)
    assert all(math.isnan(v) for v in p50_p99([]))


def test_abba_alternates_which_side_goes_first() -> None:
    assert list(abba(4)) == [(0, True), (1, False), (2, True), (3, False)]
    assert list(abba(0)) == []


def test_interleaved_runs_both_sides_in_abba_order() -> None:
    calls: list[str] = []

    def side(name: str):
        def run() -> str:
            calls.append(name)
            return f"{name}{len(calls)}"

        return run

    results_a, results_b = interleaved(side("a"), side("b"), 3)
    assert calls == ["a", "b", "b", "a", "a", "b"]
    assert results_a == ["a1", "a4", "a5"]
    assert results_b == ["b2", "b3", "b6"]


def _figure(target: Target | None) -> Figure:
    return Figure(
        "demo", "7 Something", "ours", "theirs", [Row.of("speed", "x/s", 12.0, 24.0)], target, {"series": [1, 2]}
    )


def test_the_table_shows_figures_ratio_and_target() -> None:
    console = Console(width=150, record=True)
    print_table([_figure(Target("ratio ≥ 0.5", True)), _figure(None)], "title", console)
    text = console.export_text()
    assert "7 Something" in text and "ours vs theirs" in text
    assert "0.5" in text and "met" in text and "none set" in text


def test_a_table_wider_than_the_console_folds_the_target_and_keeps_titles_and_numbers_whole() -> None:
    console = Console(width=TABLE_WIDTH, record=True)
    long = Figure(
        "story",
        "10 Story of dropped sessions at 3,000 tokens",
        "ours",
        "theirs",
        [Row.of("drain rate, 256 a batch (default), pinned, on the shared cores", "turns/s", 1234.5, 5678.25)],
        Target("LoCoMo dev: ≥ 0.85× full at 2k, ≥ 0.95× at 4k, evidence ≥ 90 % at 4k; " * 3, False),
    )
    print_table([long], "title", console)
    text = console.export_text()
    assert "10 Story of dropped sessions at 3,000 tokens" in text
    assert "drain rate, 256 a batch (default), pinned, on the shared cores" in text and "5,678" in text
    assert max(len(line) for line in text.splitlines()) <= TABLE_WIDTH


def test_the_json_holds_every_figure_with_its_target(tmp_path: Path) -> None:
    path = tmp_path / "bench.json"
    write_json(path, [_figure(Target("ratio ≥ 0.5", False))], {"quick": True})
    document = orjson.loads(path.read_bytes())
    assert document["meta"] == {"quick": True}
    figure = document["figures"]["demo"]
    assert figure["rows"] == [{"measure": "speed", "unit": "x/s", "a": 12.0, "b": 24.0, "ratio": 0.5}]
    assert figure["target"] == {"text": "ratio ≥ 0.5", "met": False}
    assert figure["data"] == {"series": [1, 2]}


def test_a_figure_measured_on_two_brokers_is_shown_side_by_side_and_keyed_by_broker(tmp_path: Path) -> None:
    def on(key: str, broker: str | None, a: float) -> Figure:
        data = {
            "drain": {"batch_sizes": {"1": {"pinned": {"stages_us_per_turn": {}, "cpu_us_per_turn": {}}}}},
            "freshness": {
                "placements": {
                    "pinned": {"worker_ms": dict.fromkeys(FRESH_COLUMNS, 1.0), "cpu_us_per_turn": {"pipeline": 1.0}}
                }
            },
        }.get(key, {})
        return Figure(key, f"title {key}", "ours", "theirs", [Row.of("speed", "x/s", a, 24.0)], None, data, broker)

    figures = [
        on("drain", "tansu", 1.0),
        on("freshness", "tansu", 2.0),
        on("prompt_size", None, 3.0),
        on("drain", "kafka", 4.0),
        on("freshness", "kafka", 5.0),
    ]
    console = Console(width=200, record=True)
    print_table(figures, "title", console)
    cells = [
        [cell.strip() for cell in line.split("│")[1:3]]
        for line in console.export_text().splitlines()
        if "│ title" in line
    ]
    assert cells == [
        ["title drain", "tansu"],
        ["title drain", "kafka"],
        ["title freshness", "tansu"],
        ["title freshness", "kafka"],
        ["title prompt_size", "offline"],
    ]
    stages = Console(width=300, record=True)
    print_stages(figures, stages)
    titles = [
        line.rstrip() for line in stages.export_text().splitlines() if line.startswith((STAGE_TITLE, FRESH_TITLE))
    ]
    assert titles == [
        f"{STAGE_TITLE} · tansu",
        f"{STAGE_TITLE} · kafka",
        f"{FRESH_TITLE} · tansu",
        f"{FRESH_TITLE} · kafka",
    ]

    path = tmp_path / "bench.json"
    write_json(path, figures, {})
    document = orjson.loads(path.read_bytes())["figures"]
    # the first broker's figures keep their plain keys: a reader of one broker's JSON reads them as before
    assert list(document) == ["drain", "drain@kafka", "freshness", "freshness@kafka", "prompt_size"]
    assert [document[key]["broker"] for key in document] == ["tansu", "kafka", "tansu", "kafka", None]
    assert document["drain@kafka"]["rows"][0]["a"] == 4.0


def test_freshness_is_met_within_both_bounds_whatever_the_ratio_to_the_yardstick() -> None:
    assert freshness_met(Row.of("p50", "ms", 15.0, 13.0), Row.of("p99", "ms", 24.0, 21.0))
    # the ratio to the SET-only agent (here 1.56×) is reported, no longer a target
    assert freshness_met(Row.of("p50", "ms", 21.0, 13.5), Row.of("p99", "ms", 33.0, 20.7))
    assert not freshness_met(Row.of("p50", "ms", 26.0, 25.0), Row.of("p99", "ms", 30.0, 29.0))  # p50 over 25 ms
    assert not freshness_met(Row.of("p50", "ms", 20.0, 19.0), Row.of("p99", "ms", 101.0, 100.0))  # p99 over 100 ms


def test_drain_is_held_to_the_workers_cpu_a_turn_not_to_the_drain_ratio() -> None:
    assert cpu_met(Row.of("CPU a turn, 256 a batch (default), pinned", "µs", 520.0, 175.0))  # 2.97×
    assert not cpu_met(Row.of("CPU a turn, 256 a batch (default), pinned", "µs", 688.3, 174.2))  # 3.95×
    assert not cpu_met(Row.of("CPU a turn, 256 a batch (default), pinned", "µs", 688.3, 0.0))  # no yardstick
