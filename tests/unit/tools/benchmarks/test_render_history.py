"""docs/performance.md's current figures and the bench's HISTORY.md are what render_history renders from the bench's
history data, and that data is whole: every figure a run names is a known figure."""

from __future__ import annotations

from types import ModuleType

import pytest

from turnstream_tools.benchmarks import render_history


@pytest.fixture(scope="module")
def history() -> ModuleType:
    return render_history


def test_the_history_loads_and_names_only_known_figures(history: ModuleType) -> None:
    runs, figures = history.load_runs(), history.load_figures()
    assert len(runs) >= 17 and all(run.notes.strip() and run.commands for run in runs)
    assert history.problems(runs, figures) == []
    named = {name for run in runs for name in run.figures}
    assert named <= set(figures)


def test_every_figure_has_one_current_value_with_its_yardstick_date_machine_and_command(history: ModuleType) -> None:
    for figure in history.load_figures().values():
        assert figure.current.value and figure.yardstick and figure.command and figure.current.machine
        assert figure.current.date[:4].isdigit(), figure.name


def test_the_rendered_pages_are_up_to_date(history: ModuleType) -> None:
    runs, figures = history.load_runs(), history.load_figures()
    page = history.PERFORMANCE.read_text(encoding="utf-8")
    assert history.rewrite(page, history.render_current(figures, runs)) == page, (
        "docs/performance.md is out of date: run python -m turnstream_tools.benchmarks.render_history"
    )
    assert history.HISTORY.read_text(encoding="utf-8") == history.render_history(runs, figures), (
        "tools/turnstream_tools/benchmarks/HISTORY.md is out of date: run python -m turnstream_tools.benchmarks.render_history"
    )
    assert history.main(["--check"]) == 0


def test_the_checks_see_an_unknown_figure_a_missing_run_and_runs_out_of_order(history: ModuleType) -> None:
    runs, figures = history.load_runs(), history.load_figures()
    first, second = runs[0], runs[1]
    stray = history.Run("x", "1999-01-01", "t", "m", ("c",), {"no_such_figure": "1"}, "n")
    found = history.problems([second, first, stray], figures)
    assert "x: unknown figure no_such_figure" in found
    assert "runs are not newest first" in found or first.date[:10] == second.date[:10]
    orphan = dict(figures)
    name, figure = next((n, f) for n, f in figures.items() if f.current.run is not None)
    assert any(p.startswith(f"{name}: unknown run") for p in history.problems([stray], orphan))
