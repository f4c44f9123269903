"""Where a turn's time goes: the worker's stage histograms, scraped twice, as µs per turn, and their table."""

from __future__ import annotations

import pytest
from rich.console import Console

from turnstream_tools.benchmarks.figures import Figure, Row
from turnstream_tools.benchmarks.report import FRESH_TITLE, STAGE_TITLE, print_stages
from turnstream_tools.benchmarks.stages import Scrape, ScrapeError, fresh_turn_ms, per_turn_us


def metrics(applied: float, **stages: tuple[float, float]) -> str:
    """Prometheus text as a worker serves it: (sum in seconds, count) per stage, and the applied turns."""
    lines = ["# TYPE turnstream_stage_seconds histogram"]
    for stage, (total, count) in stages.items():
        lines += [
            f'turnstream_stage_seconds_count{{stage="{stage}"}} {count}',
            f'turnstream_stage_seconds_sum{{stage="{stage}"}} {total}',
        ]
    lines += [
        "# TYPE turnstream_turns_total counter",
        f'turnstream_turns_total{{outcome="applied"}} {applied}',
        'turnstream_turns_total{outcome="duplicate"} 7.0',
    ]
    return "\n".join(lines) + "\n"


def test_a_rounds_shares_come_from_the_difference_of_two_scrapes() -> None:
    before = Scrape.parse(
        metrics(
            10,
            ingest=(0.001, 10),
            compaction=(0.002, 10),
            redis_write=(0.01, 10),
            journal_write=(0.03, 10),
            table_write=(0.02, 10),
        )
    )
    # 4 batches of 25 turns: 20 µs decode and 100 µs core per turn; 500 µs Redis, 250 µs journal and 1,000 µs Table per batch
    after = Scrape.parse(
        metrics(
            110,
            ingest=(0.001 + 4 * 20e-6, 14),
            compaction=(0.002 + 4 * 100e-6, 14),
            redis_write=(0.01 + 4 * 500e-6, 14),
            journal_write=(0.03 + 4 * 250e-6, 14),
            table_write=(0.02 + 4 * 1000e-6, 14),
        )
    )
    shares = per_turn_us(after - before, wall_seconds=100 * 210e-6)
    assert shares["events_per_batch"] == pytest.approx(25)
    assert shares["ingest"] == pytest.approx(20) and shares["compaction"] == pytest.approx(100)
    assert shares["redis_write"] == pytest.approx(20) and shares["table_write"] == pytest.approx(40)
    assert shares["journal_write"] == pytest.approx(10)
    assert shares["wall"] == pytest.approx(210) and shares["rest"] == pytest.approx(20)


def test_rounds_add_up_and_an_idle_worker_has_no_shares() -> None:
    one = Scrape.parse(metrics(5, redis_write=(0.5, 5)))
    assert (one + one).applied == 10 and (one + one).sums["redis_write"] == 1.0
    assert per_turn_us(one - one, 1.0) == {}


def test_text_without_the_workers_metrics_is_an_error() -> None:
    with pytest.raises(ScrapeError):
        Scrape.parse("# TYPE something_else counter\nsomething_else_total 3.0\n")


def test_the_stage_table_has_a_row_per_batch_size_and_placement_with_the_workers_cpu() -> None:
    shares = {
        "ingest": 21.0,
        "compaction": 180.5,
        "redis_write": 350.0,
        "journal_write": 1042.0,
        "table_write": 2200.0,
        "rest": 900.0,
        "wall": 4693.5,
        "events_per_batch": 1.0,
    }
    cpu = {"pipeline": 3125.0, "count": 80.0}
    drain = Figure(
        "drain",
        "1 Drain rate",
        "pipeline",
        "count-only agent",
        [Row.of("drain rate", "turns/s", 270, 7000)],
        None,
        {
            "batch_sizes": {
                "1": {
                    "pinned": {"stages_us_per_turn": shares, "cpu_us_per_turn": cpu},
                    "unpinned": {"stages_us_per_turn": {**shares, "wall": 5111.0}, "cpu_us_per_turn": cpu},
                },
                "256": {"pinned": {"stages_us_per_turn": {}, "cpu_us_per_turn": cpu}},
            }
        },
    )
    console = Console(width=240, record=True)
    print_stages([drain], console)
    text = console.export_text()
    assert STAGE_TITLE in text and "180.5" in text and "1,042" in text and "2,200" in text and "4,694" in text
    rows = [
        [cell.strip() for cell in line.split("│")[1:-1]]
        for line in text.splitlines()
        if line.lstrip("│ ")[:1].isdigit()
    ]
    assert [row[:2] for row in rows] == [["1", "pinned"], ["1", "unpinned"], ["256", "pinned"]]
    assert rows[0][-2:] == ["4,694", "3,125"] and rows[1][-2:] == ["5,111", "3,125"]
    assert set(rows[2][2:]) == {"—"}
    quiet = Console(width=200, record=True)
    print_stages([], quiet)
    assert quiet.export_text() == ""


def test_a_fresh_turns_time_is_its_wait_and_its_batchs_writes() -> None:
    before = Scrape.parse(
        metrics(
            10,
            broker_wait=(0.1, 10),
            ingest=(0.0, 5),
            compaction=(0.0, 5),
            redis_write=(0.0, 5),
            journal_write=(0.0, 5),
            table_write=(0.0, 5),
        )
    )
    # 30 turns in 20 batches: 15 ms from produce to the step, 0.4 ms core a turn, 2 ms Redis, 1.5 ms journal and
    # 1 ms Table a batch
    after = Scrape.parse(
        metrics(
            40,
            broker_wait=(0.1 + 30 * 0.015, 40),
            ingest=(20 * 50e-6, 25),
            compaction=(20 * 0.0004, 25),
            redis_write=(20 * 0.002, 25),
            journal_write=(20 * 0.0015, 25),
            table_write=(20 * 0.001, 25),
        )
    )
    spent = fresh_turn_ms(after - before)
    assert spent["broker_wait"] == pytest.approx(15) and spent["compaction"] == pytest.approx(0.4)
    assert spent["ingest"] == pytest.approx(0.05) and spent["events_per_batch"] == pytest.approx(1.5)
    assert spent["redis_write"] == pytest.approx(2) and spent["table_write"] == pytest.approx(1)
    assert spent["journal_write"] == pytest.approx(1.5)
    assert fresh_turn_ms(after - after) == {}


def test_the_freshness_stages_are_printed_under_the_drains_one_row_per_placement() -> None:
    spent = {
        "broker_wait": 19.12,
        "ingest": 0.07,
        "compaction": 0.4,
        "redis_write": 1.87,
        "journal_write": 1.03,
        "table_write": 1.74,
        "events_per_batch": 1.3,
    }
    fresh = Figure(
        "freshness",
        "2 Freshness",
        "pipeline",
        "SET-only agent",
        [Row.of("freshness p50", "ms", 21.5, 13.6)],
        None,
        {
            "placements": {
                "pinned": {"worker_ms": spent, "cpu_us_per_turn": {"pipeline": 4321.0, "set": 900.0}},
                "unpinned": {"worker_ms": {}, "cpu_us_per_turn": {"pipeline": 0.0, "set": 0.0}},
            }
        },
    )
    console = Console(width=300, record=True)
    print_stages([fresh], console)
    text = console.export_text()
    assert FRESH_TITLE in text and "19.12" in text and "1.87" in text and "1.03" in text and "1.3" in text
    assert "4,321" in text and "pinned" in text and "unpinned" not in text  # a placement without stages has no row
    assert STAGE_TITLE not in text  # no drain measured, no drain table
