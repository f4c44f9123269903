"""The demo report as rich tables, for people; `--json` gives the same figures to programs."""

from __future__ import annotations

from typing import Any

from rich.console import Console, Group
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

PREVIEW_CHARS = 160


def render(report: dict[str, Any], console: Console) -> None:
    console.print(_sessions_table(report))
    console.print(_facts_table(report))
    console.print(_prompt_panel(report["prompt"]))
    console.print(_latency_table(report))
    console.print(
        f"[bold]{report['turns']}[/] turns through Kafka → Redis in {report['elapsed_seconds']:.1f}s: "
        f"[bold]{report['throughput_turns_per_s']:.0f} turns/s[/] (budget {report['budget_tokens']} tokens per context)"
    )


def _sessions_table(report: dict[str, Any]) -> Table:
    table = Table(title="Context per session: naive full history vs compacted")
    table.add_column("session", no_wrap=True)
    for column in ("lang", "turns", "naive", "compacted", "ratio", "dropped", "facts kept"):
        table.add_column(column, justify="right")
    for row in report["sessions"]:
        kept = f"{row['planted_kept']}/{row['planted_facts']}" if row["planted_facts"] else "–"
        table.add_row(
            row["session_id"],
            row["language"],
            str(row["turns"]),
            str(row["naive_tokens"]),
            str(row["compacted_tokens"]),
            f"{row['ratio']}×",
            str(row["dropped"]),
            kept,
        )
    return table


def _facts_table(report: dict[str, Any]) -> Table:
    table = Table(title="Key facts kept in the compacted contexts (shipped samples)")
    table.add_column("session", no_wrap=True)
    table.add_column("type")
    table.add_column("fact")
    for row in report["sessions"]:
        if row["session_id"].startswith("demo-gen-"):
            continue
        for fact in row["facts"][:8]:
            table.add_row(row["session_id"], fact["type"], fact["text"])
    return table


def _prompt_panel(prompt: dict[str, Any]) -> Panel:
    lines = []
    for index, message in enumerate(prompt["messages"]):
        content = message.get("content")
        text = content if isinstance(content, str) else str(message.get("tool_calls") or content)
        preview = (
            text if len(text) <= PREVIEW_CHARS else text[:PREVIEW_CHARS] + f"… (+{len(text) - PREVIEW_CHARS} chars)"
        )
        lines.append(Text.assemble((f"{index:>2} {message['role']:<10}", "bold cyan"), preview.replace("\n", " ⏎ ")))
    recalled = ", ".join(m["text"] for m in prompt["recalled"]) or "none"
    footer = Text(f"recalled memories: {recalled}; recall skipped: {prompt['skipped_recall']}", style="dim")
    return Panel(
        Group(*lines, footer), title=f"The prompt build_prompt returns for {prompt['session_id']} (0 LLM calls)"
    )


def _latency_table(report: dict[str, Any]) -> Table:
    table = Table(title="Latency per stage (ms)")
    for column in ("stage", "p50", "p99"):
        table.add_column(column, justify="left" if column == "stage" else "right")
    for stage, figures in report["latency_ms"].items():
        table.add_row(stage, f"{figures['p50']:.2f}", f"{figures['p99']:.2f}")
    return table
