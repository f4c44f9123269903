"""`turnstream worker`: run the stream worker against the configured or embedded broker and Redis."""

from __future__ import annotations

import argparse
import sys

from turnstream.cli import CliError
from turnstream.settings import Settings
from turnstream.streams.embedded import StackError, provisioned


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "worker",
        help="run the stream worker (Faust) until SIGTERM or Ctrl-C",
        description=(
            "Consume turns, keep each session's compacted context, and write it to Redis. "
            "With TURNSTREAM_KAFKA_URL / TURNSTREAM_REDIS_URL unset, embedded services are started "
            "and their URLs printed. Add workers with the same TURNSTREAM_TOPIC_PREFIX to scale out."
        ),
    )
    parser.add_argument("--loglevel", default="warning", choices=("debug", "info", "warning", "error"))
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    try:
        with provisioned(Settings()) as settings:
            print(f"KAFKA_URL={settings.kafka_url}\nREDIS_URL={settings.redis_url}", file=sys.stderr, flush=True)
            return run_worker(settings, args.loglevel)
    except StackError as error:
        raise CliError(str(error)) from None


def run_worker(settings: Settings, loglevel: str) -> int:
    """Run a Faust worker in this process until it is stopped; returns its exit status."""
    import asyncio

    import faust
    from prometheus_client import start_http_server

    from turnstream.streams.admin import ensure_topics
    from turnstream.streams.app import create_app

    topics = asyncio.run(ensure_topics(settings))
    if settings.metrics_port is not None:
        start_http_server(settings.metrics_port, addr=settings.web_bind)
    worker = faust.Worker(create_app(settings, topics.replication_factor), loglevel=loglevel, quiet=True)
    try:
        worker.execute_from_commandline()
    except SystemExit as exit_:
        return int(exit_.code or 0)
    return 0
