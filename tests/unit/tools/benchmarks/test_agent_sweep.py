"""The seed sweep: what it counts, and how it marks what a change moved."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from turnstream_tools.benchmarks.agent_sweep import PER_DOMAIN, SEEDS, main, movement, report, sweep
from turnstream_tools.benchmarks.suite import FULL


def test_a_row_moves_up_down_or_both_by_its_old_and_all_values() -> None:
    before = [10, 12, 20, 24, 5, 5]
    assert movement(before, list(before)) == ""
    assert movement(before, [11, 12, 20, 24, 5, 5]) == "UP"
    assert movement(before, [10, 12, 19, 24, 5, 5]) == "DOWN"
    assert movement(before, [11, 12, 19, 24, 5, 5]) == "MIXED"
    assert movement(before, [10, 12, 20, 24, 4, 5]) == "DOWN"  # a broken invariant is no rise


def test_the_report_shows_all_domains_unless_asked_and_marks_rows_against_a_saved_sweep() -> None:
    counts = {"0@2500@all": [8, 10, 18, 20, 4, 4], "0@2500@retail": [3, 4, 6, 7, 2, 2]}
    assert report(counts, None, domains=False) == ["0@2500@all                   old 8/10  all 18/20  clean 4/4"]
    assert len(report(counts, None, domains=True)) == 2
    before = {"0@2500@all": [9, 10, 18, 20, 4, 4]}
    (line,) = report(counts, before, domains=True)  # a row the saved sweep lacks is not compared
    assert line.startswith("0@2500@all") and "old 9/10 -> 8" in line and line.endswith("DOWN")


def test_a_sweep_counts_every_budget_and_domain_of_each_seed() -> None:
    counts = sweep([0], 1)
    assert {key.split("@")[1] for key in counts} == {"2500", "4000"}
    total = counts["0@4000@all"]
    parts = [value for key, value in counts.items() if key.startswith("0@4000@") and not key.endswith("@all")]
    assert len(parts) >= 6 and total[3] == sum(part[3] for part in parts) > 0
    assert all(0 <= part[0] <= part[1] and 0 <= part[2] <= part[3] and part[4] <= part[5] for part in parts)


def test_the_command_writes_its_counts_and_refuses_an_unreadable_sweep(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "sweep.json"
    assert main(["--seeds", "0", "--per-domain", "1", "--json", str(out)]) == 0
    assert json.loads(out.read_text()).keys() >= {"0@2500@all", "0@4000@all"}
    assert main(["--seeds", "0", "--per-domain", "1", "--against", str(out)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines and not any(line.endswith(("UP", "DOWN", "MIXED")) for line in lines)  # the same code moves nothing
    with pytest.raises(SystemExit) as refused:
        main(["--against", str(tmp_path / "missing.json")])
    assert refused.value.code == 2


def test_the_sweeps_traces_leave_figure_13s_held_out_traces_alone() -> None:
    swept = {seed + n for seed in SEEDS for n in range(PER_DOMAIN)}
    held_out = {seed + n for seed in FULL.agent_holdout_seeds for n in range(FULL.agent_traces)}
    assert swept.isdisjoint(held_out)
