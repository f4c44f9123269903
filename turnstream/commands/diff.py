"""`turnstream diff NAME`: the live prompts against shadow NAME's, for a sample of sessions and their users' own turns
(operations/diff.py); a terminal table, or `--json` for CI (its schema: docs/operations.md)."""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import orjson
from rich.console import Console
from rich.table import Table

from turnstream.cli import CliError, require_extra
from turnstream.commands._args import positive_int
from turnstream.commands._services import client_logging, configured_settings, in_one_line
from turnstream.settings import Settings

if TYPE_CHECKING:
    from turnstream.operations.diff import DiffPlan, Holds
    from turnstream.operations.diff_report import Question, SessionDiff, Summary

DEFAULT_SESSIONS = 20


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "diff",
        help="compare the live prompts with a shadow's (another key prefix on the same Redis), session by session",
        description=(
            "Ask the same questions of the live contexts (TURNSTREAM_TOPIC_PREFIX) and of shadow NAME's (the contexts "
            "a worker with TURNSTREAM_TOPIC_PREFIX=NAME, or `turnstream shadow NAME`, wrote to the same Redis), through "
            "the prompt read a gateway runs, recording nothing. The questions are each sampled session's last user "
            "turns, read from the live turns topic. Per session: prompt tokens on each side, the facts and memories "
            "the shadow's prompt adds, removes or changes, the archived turns it recalls that the live one does not "
            "(gained) and the reverse (lost), and the text diff of the two prompts; then a summary. With --labels, "
            "the labelled questions instead, and whether each side's prompt holds each answer, scored as "
            "`turnstream bench --recall-only` scores it. Reads only; exit 0 once compared."
        ),
    )
    parser.add_argument("name", metavar="NAME", help="the shadow's key prefix")
    count = parser.add_mutually_exclusive_group()
    count.add_argument(
        "--sessions",
        type=positive_int,
        metavar="N",
        help=f"sessions to sample from the live prefix, the same ones every run (default {DEFAULT_SESSIONS})",
    )
    count.add_argument("--all", action="store_true", help="every session of the live prefix")
    parser.add_argument(
        "--session",
        action="append",
        default=[],
        metavar="KEY",
        help="a session key (tenant:session for a tenant's) to compare besides the sample; repeatable",
    )
    parser.add_argument(
        "--questions", type=positive_int, default=1, metavar="N", help="each session's last N user turns (default 1)"
    )
    parser.add_argument("--json", action="store_true", help="print the report as JSON (schema: docs/operations.md)")
    parser.add_argument(
        "--labels",
        type=Path,
        metavar="FILE",
        help="a labelled question set (a LoCoMo conversation, as `bench --locomo` reads them, or recall cases' labels): "
        "its sessions and questions instead of the sample, each scored on both sides (needs the tools extra)",
    )
    parser.add_argument(
        "--shadow-set",
        action="append",
        default=[],
        metavar="FIELD=VALUE",
        help="a setting the shadow's prompts are read with, where it differs from the live one's (e.g. "
        "embeddings=local, prompt_budget_tokens=2000); repeatable",
    )
    parser.set_defaults(run=run)


def shadow_settings(name: str, assignments: list[str]) -> Settings:
    """The settings shadow NAME's prompts are read with: the environment's, its prefix and the --shadow-set ones."""
    overrides: dict[str, str] = {}
    for assignment in assignments:
        field, sep, value = assignment.partition("=")
        if not sep or field.strip() not in Settings.model_fields or field.strip() == "topic_prefix":
            raise CliError(
                f"--shadow-set {assignment!r}: not FIELD=VALUE with FIELD a setting (see `turnstream config`)", code=2
            )
        overrides[field.strip()] = value
    return Settings(**overrides, topic_prefix=name)  # type: ignore[arg-type]  # pydantic parses the strings


def run(args: argparse.Namespace) -> int:
    from turnstream.operations.diff import DiffPlan, DiffRefused, check_names

    client_logging()
    labelled, holds = _labels(args.labels) if args.labels else (None, None)
    settings = configured_settings(kafka=labelled is None, redis=True)
    shadow = shadow_settings(args.name, args.shadow_set)
    try:
        check_names(settings.topic_prefix, shadow.topic_prefix)
    except DiffRefused as error:
        raise CliError(str(error), code=2) from None
    plan = DiffPlan(
        None if args.all else (args.sessions or DEFAULT_SESSIONS), tuple(args.session), args.questions, labelled
    )
    sessions = _compare(settings, shadow, plan, holds)
    if args.json:
        from turnstream.operations.diff_report import report_json

        sys.stdout.buffer.write(
            orjson.dumps(report_json(settings.topic_prefix, args.name, sessions), option=orjson.OPT_INDENT_2) + b"\n"
        )
    else:
        print_report(settings.topic_prefix, args.name, sessions)
    return 0


def print_report(live: str, shadow: str, sessions: list[SessionDiff]) -> None:
    """The per-session table, the summary, then each differing prompt's text diff, on stdout."""
    from turnstream.operations.diff_report import summarize

    console = Console(highlight=False, soft_wrap=True)
    columns = ("session", "questions", "tokens live", "tokens shadow", "facts ±", "memories ±", "recalled +/-")
    table = Table(*columns, "identical", title=f"live {live} against shadow {shadow}")
    for session in sessions:
        diffs = [q.diff for q in session.questions]
        table.add_row(
            session.session + ("" if session.in_shadow else " (not in shadow)"),
            str(len(diffs)),
            " ".join(str(d.live_tokens) for d in diffs),
            " ".join(str(d.shadow_tokens) for d in diffs),
            str(sum(d.facts.count for d in diffs)),
            str(sum(d.memories.count for d in diffs)),
            f"+{sum(len(d.recalled.gained) for d in diffs)}/-{sum(len(d.recalled.lost) for d in diffs)}",
            "yes" if session.identical else "no",
        )
    console.print(table)
    console.print(_summary_table(summarize(sessions)))
    for session in sessions:
        for asked in session.questions:
            if asked.diff.text:
                console.print(f"\n{session.session}: {asked.question.text!r}", markup=False)
                console.print("\n".join(asked.diff.text), markup=False)


def _summary_table(summary: Summary) -> Table:
    table = Table("summary", "live", "shadow")
    table.add_row("sessions compared", str(summary.sessions), "")
    table.add_row("questions", str(summary.questions), "")
    table.add_row("sessions identical", str(summary.sessions_identical), "")
    table.add_row("sessions not in the shadow", str(summary.missing_in_shadow), "")
    table.add_row("prompt tokens, mean", f"{summary.tokens_mean[0]:.1f}", f"{summary.tokens_mean[1]:.1f}")
    table.add_row("prompt tokens, p50", f"{summary.tokens_p50[0]:.1f}", f"{summary.tokens_p50[1]:.1f}")
    table.add_row("facts added, removed or changed", str(summary.facts_changed), "")
    table.add_row("memories added, removed or changed", str(summary.memories_changed), "")
    table.add_row("recalled turns gained / lost", f"{summary.recalled_gained} / {summary.recalled_lost}", "")
    if summary.labelled:
        table.add_row("labelled questions answered", str(summary.answered[0]), str(summary.answered[1]))
        table.add_row("answers gained / lost", f"{summary.answered_gained} / {summary.answered_lost}", "")
    return table


def _compare(settings: Settings, shadow: Settings, plan: DiffPlan, holds: Holds | None) -> list[SessionDiff]:
    from turnstream.kafka.session_log import LogUnreadable
    from turnstream.operations.diff import DiffRefused, compare

    with in_one_line(DiffRefused, LogUnreadable):
        return asyncio.run(compare(settings, shadow, plan, holds))


def _labels(path: Path) -> tuple[dict[str, list[Question]], Holds]:
    """The labelled questions of `path` and the recall bench's scoring, both turnstream-tools'."""
    require_extra("tools")
    from turnstream_tools.benchmarks.recall import labelled_questions, prompt_holds

    try:
        return labelled_questions(path), prompt_holds
    except OSError as error:
        raise CliError(f"cannot read --labels {path}: {error.strerror or error}", code=2) from None
    except (KeyError, TypeError, ValueError) as error:
        raise CliError(
            f"--labels {path} is neither a LoCoMo conversation nor recall labels: {error!r}", code=2
        ) from None
