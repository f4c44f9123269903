"""`turnstream demo`: the main job on the embedded default, end to end, with a report. The arguments are here; the
run is turnstream-tools' (`turnstream_tools.demo.command`, decision 0036)."""

from __future__ import annotations

import argparse

from turnstream.cli import require_extra
from turnstream.commands._args import positive_int
from turnstream.commands._services import client_logging


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "demo",
        help="replay sample conversations through Kafka and show the compacted contexts (about a minute)",
        description=(
            "Start the embedded broker and Redis (unless TURNSTREAM_KAFKA_URL / TURNSTREAM_REDIS_URL are set) "
            "and a worker, replay the shipped sample conversations (a ReAct travel agent, a Chinese companion "
            "chat, a support conversation with corrections) and generated ones through Kafka, wait until every "
            "context is current, print a report, and stop everything it started."
        ),
    )
    parser.add_argument(
        "--sessions",
        type=positive_int,
        default=12,
        help="conversations to replay (default 12: 3 samples + 9 generated)",
    )
    parser.add_argument(
        "--turns",
        type=positive_int,
        default=None,
        help="messages per conversation (default: samples whole, generated 150)",
    )
    parser.add_argument(
        "--budget-tokens", type=positive_int, default=2000, help="context budget per session (default 2000)"
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of the generated conversations")
    parser.add_argument("--timeout", type=positive_int, default=300, help="seconds to wait for the worker to catch up")
    parser.add_argument("--json", action="store_true", help="print the report as JSON instead of tables")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    require_extra("worker")
    require_extra("tools")
    from turnstream_tools.demo.command import run as run_demo

    client_logging()
    return run_demo(args)
