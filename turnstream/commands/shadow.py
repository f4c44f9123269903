"""`turnstream shadow run|status|drop NAME`: replay the live turns topic into a shadow under another configuration,
see how far it is, and remove it (docs/changing-a-strategy.md)."""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
from datetime import datetime
from typing import TYPE_CHECKING, Any

from turnstream.cli import CliError, require_extra
from turnstream.commands._services import client_logging, configured_settings, in_one_line

if TYPE_CHECKING:
    from turnstream.operations.shadow_progress import ProgressDisplay
    from turnstream.settings import Settings

_NAME_HELP = "the shadow's name: its topic prefix, consumer group (NAME-worker) and Redis key prefix (NAME:)"


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "shadow",
        help="replay the turns topic into a shadow under another configuration, beside the live worker",
        description=(
            "A shadow is a worker under its own prefix NAME that reads the live prefix's turns topic "
            "(TURNSTREAM_TOPIC_PREFIX) and writes everything else under NAME: its topics, its consumer group "
            "NAME-worker, its Table, its Redis keys NAME:…, never the live worker's. Compare it with `turnstream diff "
            "NAME`; see docs/changing-a-strategy.md."
        ),
    )
    actions = parser.add_subparsers(dest="action", metavar="ACTION", parser_class=type(parser))
    actions.required = True

    run = actions.add_parser(
        "run",
        help="run the shadow in the foreground until SIGTERM or Ctrl-C, with a progress line",
        description=(
            "Run a worker under prefix NAME on the live turns topic, with the environment's settings and --set's on "
            "top (e.g. --set embeddings=local --set budget_tokens=2000). It never produces into the turns topic, "
            "and calls no LLM unless --llm. Killed, it resumes where its group committed (its Table comes back "
            "from its changelog). Needs TURNSTREAM_KAFKA_URL and TURNSTREAM_REDIS_URL: the live worker's services."
        ),
    )
    run.add_argument("name", metavar="NAME", help=_NAME_HELP)
    where = run.add_mutually_exclusive_group()
    where.add_argument(
        "--from-beginning",
        action="store_true",
        help="start a new shadow at the beginning of the turns topic (the default)",
    )
    where.add_argument(
        "--from-offset",
        type=_offset,
        metavar="N",
        help="start a new shadow at offset N of every partition (clipped to what the partition holds); "
        "a shadow that has committed offsets resumes there instead",
    )
    where.add_argument(
        "--from-time",
        type=_time_ms,
        metavar="ISO",
        help="start a new shadow at the first turn at or after this time (ISO 8601, e.g. 2026-12-01T09:00:00+00:00; "
        "no zone: UTC); a shadow that has committed offsets resumes there instead",
    )
    run.add_argument(
        "--rate",
        type=_rate,
        metavar="TURNS_PER_S",
        help="take at most this many records a second (a token bucket), leaving the broker and Redis to the live "
        "worker; default: no limit",
    )
    run.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a setting of the shadow's own (a name from docs/configuration.md, with or without TURNSTREAM_, any "
        "case); repeat for more",
    )
    run.add_argument(
        "--llm",
        action="store_true",
        help="let the shadow call the LLM (OPENAI_BASE_URL) for summaries and key info; off by default",
    )
    run.add_argument(
        "--llm-max-calls",
        type=_count,
        metavar="N",
        help="with --llm: answer at most N summary requests with the LLM, the rest offline (counted in "
        'turnstream_llm_requests_total{outcome="capped"} and on the progress line)',
    )
    run.add_argument(
        "-l", "--loglevel", default=None, metavar="LEVEL", help="the worker's log level (default: warning)"
    )
    run.set_defaults(run=run_shadow)

    status = actions.add_parser(
        "status",
        help="the shadow's lag per partition, turns applied and Redis keys",
        description="Per partition of the turns topic: the shadow group's committed offset, the end, the lag; "
        "then its contexts, the turns they applied (their versions summed) and its Redis keys.",
    )
    status.add_argument("name", metavar="NAME", help=_NAME_HELP)
    status.set_defaults(run=run_status)

    drop = actions.add_parser(
        "drop",
        help="delete the shadow: its Redis keys, consumer group and topics (never the live ones)",
        description="Delete exactly the shadow's Redis keys (NAME:…), its consumer group NAME-worker, its topics "
        "(NAME.memory, NAME.summaries, NAME.compaction, NAME.turns.dlq, and Faust's NAME-worker-…) and its local "
        "Faust folder. The turns topic and everything of the live prefix stay. Stop `shadow run` first.",
    )
    drop.add_argument("name", metavar="NAME", help=_NAME_HELP)
    drop.add_argument(
        "--force",
        action="store_true",
        help="drop even while the shadow's running mark is in Redis, for a killed shadow's (it expires within 15 s); "
        "a shadow still running must be stopped first, or it writes its keys again",
    )
    drop.set_defaults(run=run_drop)


def _offset(text: str) -> int:
    if not text.isdigit():
        raise argparse.ArgumentTypeError(f"{text!r} is not an offset (0 or more)")
    return int(text)


def _count(text: str) -> int:
    if not text.isdigit():
        raise argparse.ArgumentTypeError(f"{text!r} is not a count (0 or more)")
    return int(text)


def _rate(text: str) -> float:
    try:
        rate = float(text)
    except ValueError:
        rate = 0.0
    if not rate > 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not a rate above 0")
    return rate


def _time_ms(text: str) -> int:
    from datetime import UTC

    try:
        at = datetime.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an ISO 8601 time") from None
    return int((at if at.tzinfo else at.replace(tzinfo=UTC)).timestamp() * 1000)


def run_shadow(args: argparse.Namespace) -> int:
    from turnstream.commands.worker import run_worker
    from turnstream.kafka.faust_private.versions import installed, refusal
    from turnstream.logs import parse_level
    from turnstream.operations.shadow import (
        ShadowError,
        StartAt,
        commit_start,
        parse_overrides,
        shadow_settings,
        turn_partitions,
    )
    from turnstream.operations.shadow_progress import ProgressDisplay
    from turnstream.redis.shadow_mark import mark_starting

    if (untested := refusal(installed())) is not None:
        raise CliError(untested)
    require_extra("worker")
    if args.llm_max_calls is not None and not args.llm:
        raise CliError("--llm-max-calls caps --llm: add --llm", code=2)
    live = configured_settings(kafka=True, redis=True)
    with in_one_line(ShadowError, ValueError):
        loglevel = parse_level(args.loglevel or live.log_level)
        settings = shadow_settings(
            live, args.name, parse_overrides(args.set), llm=args.llm, llm_max_calls=args.llm_max_calls, rate=args.rate
        )
        if args.llm and not settings.llm_enabled:
            raise ShadowError("--llm needs an endpoint: set OPENAI_BASE_URL")
        chatter = logging.getLogger("aiokafka")  # its connection errors, which the one line reports
        level = chatter.level
        chatter.setLevel(logging.CRITICAL)
        try:
            # the summaries topic and the Table must be co-partitioned with the live turns topic: take its count
            settings = settings.model_copy(update={"turn_partitions": asyncio.run(turn_partitions(settings))})
            where = asyncio.run(commit_start(settings, StartAt(args.from_offset, args.from_time)))
            # `shadow drop` refuses from now on, the worker's start included
            asyncio.run(mark_starting(settings, settings.topic_prefix, settings.startup_timeout_seconds * 2))
        finally:
            chatter.setLevel(level)
    print(f"shadow {settings.topic_prefix} of {settings.turns_from}: {where}", file=sys.stderr, flush=True)
    display = ProgressDisplay(fmt=settings.log_format)
    try:
        return run_worker(settings, loglevel, lambda app: _while_running(app, settings, display))
    finally:
        display.close()


def _while_running(app: Any, settings: Settings, display: ProgressDisplay) -> None:
    """What a running shadow keeps up beside the worker: its progress line and its mark in Redis."""
    from turnstream.operations.shadow_progress import register_progress, register_running_mark

    register_progress(app, settings, display)
    register_running_mark(app, settings)


def run_status(args: argparse.Namespace) -> int:
    from turnstream.operations.shadow import ShadowError, shadow_settings, status

    client_logging()
    live = configured_settings(kafka=True, redis=True)
    with in_one_line(ShadowError):
        found = asyncio.run(status(shadow_settings(live, args.name)))
    print(f"shadow {args.name} of {live.topic_prefix} ({live.turns_topic}, group {args.name}-worker)")
    print("partition  committed  end  lag")
    for row in found.partitions:
        committed = "-" if row.committed is None else str(row.committed)
        print(f"{row.partition:>9}  {committed:>9}  {row.end:>3}  {row.lag:>3}")
    print(f"lag: {sum(row.lag for row in found.partitions)}")
    print(f"contexts: {found.contexts}, turns applied: {found.turns_applied}, Redis keys: {found.keys}")
    return 0


def run_drop(args: argparse.Namespace) -> int:
    from turnstream.operations.shadow import ShadowError, drop, shadow_settings

    client_logging()
    live = configured_settings(kafka=True, redis=True)
    with in_one_line(ShadowError):
        dropped = asyncio.run(drop(shadow_settings(live, args.name), live, args.force))
    print(
        f"dropped shadow {args.name}: {dropped.keys} Redis keys, groups deleted: {', '.join(dropped.groups) or 'none'}"
    )
    print(f"topics: {', '.join(dropped.topics) or 'none'}")
    return 0
