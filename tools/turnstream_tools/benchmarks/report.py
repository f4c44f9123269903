"""The bench's outputs: a rich table, a JSON document of every figure, and a plot."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
from rich.console import Console, JustifyMethod
from rich.table import Table

from turnstream.errors import TurnstreamError
from turnstream_tools.benchmarks.figures import Figure
from turnstream_tools.benchmarks.stages import STAGE_NAMES


class PlotUnavailable(TurnstreamError, RuntimeError):
    """matplotlib is not installed."""


def _number(value: float) -> str:
    # figures carry 4 significant digits already: from 1,000 on they are whole
    return f"{value:,.0f}" if abs(value) >= 1000 else f"{value:.4g}"


TABLE_WIDTH = 220
"""Wide enough for one line per row; a piped table is not cut to 80 columns."""
OFFLINE = "offline"
"""The broker column of a figure measured without one."""


def grouped(figures: list[Figure]) -> list[Figure]:
    """`figures` in their order, each figure measured on several brokers with its copies side by side."""
    order: dict[str, int] = {}
    for figure in figures:
        order.setdefault(figure.key, len(order))
    return sorted(figures, key=lambda figure: order[figure.key])


def keyed(figures: list[Figure]) -> dict[str, Figure]:
    """The JSON's keys: a figure's key, and `key@broker` for the same figure measured again on another broker."""
    out: dict[str, Figure] = {}
    for figure in figures:
        out[figure.key if figure.key not in out else f"{figure.key}@{figure.broker}"] = figure
    return out


def table(figures: list[Figure], title: str) -> Table:
    """One row per measure: the broker, A, B, their ratio, and the group's target beside its first row."""
    out = Table(title=title, title_justify="left")
    columns: tuple[tuple[str, JustifyMethod], ...] = (
        ("figure (A vs B)", "left"),
        ("broker", "left"),
        ("measure", "left"),
        ("unit", "left"),
        ("A", "right"),
        ("B", "right"),
        ("A/B", "right"),
        ("target", "left"),
        ("met", "left"),
    )
    for column, justify in columns:
        # only the target's text may wrap: a table wider than the console then folds it, rather than cutting
        # the figure's title or a number short
        out.add_column(column, justify=justify, no_wrap=column != "target")
    for figure in grouped(figures):
        target = figure.target
        for index, row in enumerate(figure.rows):
            first = index == 0
            out.add_row(
                f"{figure.title}\n[dim]{figure.a_label} vs {figure.b_label}[/dim]" if first else "",
                (figure.broker or OFFLINE) if first else "",
                row.measure,
                row.unit,
                _number(row.a),
                _number(row.b),
                "—" if row.ratio is None else f"{row.ratio:.3g}",
                (target.text if target else "none set") if first else "",
                ("[green]met[/green]" if target.met else "[red]not met[/red]") if first and target else "",
                end_section=index == len(figure.rows) - 1,
            )
    return out


def print_table(figures: list[Figure], title: str, console: Console | None = None) -> None:
    (console or Console(width=TABLE_WIDTH)).print(table(figures, title))


STAGE_TITLE = "Where a turn's time goes in the worker while it drains (µs per turn; worker CPU from /proc)"
FRESH_TITLE = "Where a turn's time goes in the worker in the freshness rounds (mean ms; the turn is readable after the Redis write)"
FRESH_COLUMNS = {
    "broker_wait": "produce → stepped (fetch wait, batch window, previous batch)",
    "ingest": "decode a turn",
    "compaction": "core a turn",
    "redis_write": "Redis write a batch",
    "journal_write": "journal write a batch",
    "table_write": "Table write a batch",
    "events_per_batch": "events a batch",
}


def _on_broker(title: str, figure: Figure) -> str:
    return title if figure.broker is None else f"{title} · {figure.broker}"


def stage_table(drain: Figure) -> Table | None:
    """One row per batch size the drain figure measured and placement: each stage's share of a turn, the rest of
    the wall time (fetching, acknowledging, committing, waiting), the whole, and the worker's CPU a turn beside
    it; None without its stages."""
    if "batch_sizes" not in drain.data:
        return None
    out = Table(title=_on_broker(STAGE_TITLE, drain), title_justify="left")
    columns = [
        "events a batch (set)",
        "placement",
        "mean events a batch",
        *STAGE_NAMES.values(),
        "rest: fetch, ack, commit",
        "wall",
        "worker CPU",
    ]
    for index, column in enumerate(columns):
        out.add_column(column, justify="left" if index < 2 else "right", no_wrap=True)
    for size, by_placement in drain.data["batch_sizes"].items():
        for placement, measured in by_placement.items():
            shares = measured["stages_us_per_turn"]
            if not shares:
                out.add_row(size, placement, *["—"] * (len(columns) - 2))
                continue
            out.add_row(
                size,
                placement,
                f"{shares['events_per_batch']:.1f}",
                *(_number(shares[stage]) for stage in STAGE_NAMES),
                _number(shares["rest"]),
                _number(shares["wall"]),
                _number(measured["cpu_us_per_turn"]["pipeline"]),
            )
    return out


def fresh_table(fresh: Figure) -> Table | None:
    """The worker's side of the freshness figure, stage by stage, one row per placement, with the worker's CPU
    a turn; None without its stages."""
    measured = {placement: each for placement, each in fresh.data.get("placements", {}).items() if each["worker_ms"]}
    if not measured:
        return None
    out = Table(title=_on_broker(FRESH_TITLE, fresh), title_justify="left")
    for index, column in enumerate(["placement", *FRESH_COLUMNS.values(), "worker CPU a turn (µs)"]):
        out.add_column(column, justify="left" if index == 0 else "right", no_wrap=index > 1)
    for placement, each in measured.items():
        spent = each["worker_ms"]
        out.add_row(
            placement,
            *(f"{spent[key]:.2f}" if key != "events_per_batch" else f"{spent[key]:.1f}" for key in FRESH_COLUMNS),
            _number(each["cpu_us_per_turn"]["pipeline"]),
        )
    return out


AGENT_TITLE = "{title}, per domain (% of needed values kept: old / all)"


def agent_table(figure: Figure) -> Table:
    """An agent-values figure (13 to 16) per budget and domain: each side's share of old and of all needed values,
    the invariants, the calls left out (anchors over the budget) and, where measured, where turnstream's lost values
    had been said."""
    out = Table(title=_on_broker(AGENT_TITLE.format(title=figure.title), figure), title_justify="left")
    first = next(iter(next(iter(figure.data["budgets"].values())).values()))
    sides = list(first["sides"])
    lost_known = "lost_from" in first
    columns = ["budget", "domain", "calls", *sides, "invariants clean", "left out"]
    columns += ["lost: tool only / said"] if lost_known else []
    for index, column in enumerate(columns):
        out.add_column(column, justify="left" if index < 2 else "right", no_wrap=True)
    for budget, by_domain in figure.data["budgets"].items():
        for number, (domain, measured) in enumerate(by_domain.items(), 1):
            kept = measured["sides"]
            lost = measured.get("lost_from", {})
            out.add_row(
                f"{int(budget):,}",
                domain,
                str(measured["points"]),
                *(
                    f"{kept[side]['old_kept_pct']:.1f} / {kept[side]['kept_pct']:.1f}" if measured["points"] else "—"
                    for side in sides
                ),
                f"{measured['invariants_clean']}/{measured['points']}",
                str(measured["pinned_over_budget"]),
                *([f"{lost['tool results only']} / {lost['user or assistant']}"] if lost_known else []),
                end_section=number == len(by_domain),
            )
    return out


ROOM_TITLE = "{title}, by the room the anchors leave (turnstream's % of needed values kept: old / all)"


def room_table(figure: Figure) -> Table | None:
    """Figure 13's tallies over every domain, per budget and per room left after the anchors: where a long policy
    leaves the marker, the block and the tail too little to hold what the next call needs. None without the split."""
    budgets = figure.data["budgets"]
    if "by_room" not in next(iter(budgets.values()))["all"]:
        return None
    out = Table(title=ROOM_TITLE.format(title=figure.title), title_justify="left")
    for index, column in enumerate(["budget", "room (tokens)", "calls", "turnstream"]):
        out.add_column(column, justify="left" if index < 2 else "right", no_wrap=True)
    for budget, by_domain in budgets.items():
        rooms = by_domain["all"]["by_room"]
        for number, (label, each) in enumerate(rooms.items(), 1):
            shares = f"{each['old_kept_pct']:.1f} / {each['kept_pct']:.1f}" if each["calls"] else "—"
            out.add_row(f"{int(budget):,}", label, str(each["calls"]), shares, end_section=number == len(rooms))
    return out


def print_stages(figures: list[Figure], console: Console | None = None) -> None:
    """The stage tables of the drain and freshness figures the run measured, one per broker, and the agent
    figure's table per domain."""
    console = console or Console(width=TABLE_WIDTH)
    tables = {
        "drain": stage_table,
        "freshness": fresh_table,
        "agent_values": agent_table,
        "agent_stream": agent_table,
        "agent_stream_llm": agent_table,
        "agent_values_llm": agent_table,
    }
    for figure in grouped(figures):
        table = tables[figure.key](figure) if figure.key in tables else None
        if table is not None:
            console.print(table)
        if figure.key == "agent_values" and (rooms := room_table(figure)) is not None:
            console.print(rooms)


def write_json(path: Path, figures: list[Figure], meta: dict[str, Any]) -> None:
    document = {"meta": meta, "figures": {key: figure.to_dict() for key, figure in keyed(grouped(figures)).items()}}
    path.write_bytes(orjson.dumps(document, option=orjson.OPT_INDENT_2))


def write_plot(path: Path, figures: list[Figure]) -> None:
    """Prompt size vs turns (naive vs compacted) and the read-latency distributions, side by side."""
    try:
        import matplotlib

        matplotlib.use("Agg")  # files only: no display needed
        import matplotlib.pyplot as plt
    except ImportError:
        raise PlotUnavailable("--plot needs matplotlib: pip install 'turnstream[bench]'") from None
    by_key = {figure.key: figure for figure in figures}
    fig, (left, right) = plt.subplots(1, 2, figsize=(13, 5))
    if "prompt_size" in by_key:
        series = by_key["prompt_size"].data["series"]
        left.plot(series["turns"], series["naive"], label="naive full history")
        left.plot(series["turns"], series["compacted"], label="compacted context")
        left.axhline(by_key["prompt_size"].data["budget_tokens"], color="grey", linestyle=":", label="budget")
        left.set_yscale("log")
        left.set(title="Prompt size vs conversation length", xlabel="turns", ylabel="prompt tokens")
        left.legend()
    if "reads" in by_key:
        samples = by_key["reads"].data["samples_ms"]
        names = list(samples)
        right.boxplot([samples[name] for name in names], whis=(1, 99), showfliers=False)
        right.set_xticks(range(1, len(names) + 1), [_read_label(name) for name in names])
        right.set(title="Read latency (whiskers p1–p99)", ylabel="ms")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def _read_label(name: str) -> str:
    return {"GET": "plain Redis GET", "get": "ContextClient.get", "build_prompt": "build_prompt"}.get(name, name)
