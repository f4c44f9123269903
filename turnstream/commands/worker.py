"""`turnstream worker`: run the stream worker against the configured or embedded broker and Redis."""

from __future__ import annotations

import argparse
import gc
import logging
import sys
from typing import TYPE_CHECKING

from turnstream.cli import CliError, require_extra
from turnstream.kafka.faust_private.versions import installed as installed_versions
from turnstream.kafka.faust_private.versions import refusal
from turnstream.lifecycle.startup import startup_logging
from turnstream.logs import faust_logging_config, parse_level, retried_lookups_as_warnings
from turnstream.settings import Settings
from turnstream.stack.services import StackError, provisioned

if TYPE_CHECKING:
    from collections.abc import Callable

    import faust

    from turnstream.kafka.topic_creation import TopicsReady

log = logging.getLogger("turnstream.startup")


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "worker",
        help="run the stream worker (Faust) until SIGTERM or Ctrl-C",
        description=(
            "Consume turns, keep each session's compacted context, and write it to Redis. "
            "Waits up to TURNSTREAM_STARTUP_TIMEOUT_SECONDS for the broker and Redis. With TURNSTREAM_KAFKA_URL / "
            "TURNSTREAM_REDIS_URL unset, embedded services are started (unless TURNSTREAM_EMBEDDED=never) and their "
            "URLs printed. Prints READY group=… topic=… partitions=… on stdout once it consumes (the partitions of the "
            "turns topic it holds). Add workers with the same TURNSTREAM_TOPIC_PREFIX to scale out. With "
            "TURNSTREAM_METRICS_PORT set, "
            "serves Prometheus /metrics there (stage latencies, consumer lag per partition, sessions held, rebalances, "
            "Redis write retries). Needs the worker extra "
            "(pip install 'turnstream[worker]'), and the embedded one for embedded services."
        ),
    )
    parser.add_argument(
        "-l",
        "--loglevel",
        type=_level,
        default=None,
        metavar="LEVEL",
        help="debug, info, warning, error or critical, in any case (default: TURNSTREAM_LOG_LEVEL, else warning); "
        "TURNSTREAM_LOG_FORMAT=json writes every line as a JSON object",
    )
    parser.set_defaults(run=run)


def _level(text: str) -> str:
    try:
        return parse_level(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def run(args: argparse.Namespace) -> int:
    # before Faust is imported: a release whose internals moved may not even import
    if (untested := refusal(installed_versions())) is not None:
        raise CliError(untested)
    require_extra("worker")
    configured = Settings()
    startup_logging(configured.log_format)
    try:
        with provisioned(configured) as settings:
            kafka_url, redis_url = settings.redact(settings.kafka_url or ""), settings.redact(settings.redis_url or "")
            if settings.log_format == "json":  # every stderr line stays a JSON object
                log.info("services", extra={"kafka_url": kafka_url, "redis_url": redis_url})
            else:
                print(f"KAFKA_URL={kafka_url}\nREDIS_URL={redis_url}", file=sys.stderr, flush=True)
            if configured.kafka_url is None:
                log.warning(
                    "TURNSTREAM_KAFKA_URL is unset: started an EMBEDDED Tansu broker at %s; it keeps topics in memory "
                    "and loses them on exit (development only; TURNSTREAM_EMBEDDED=never forbids this)",
                    settings.kafka_url,
                )
            if configured.redis_url is None:
                log.warning(
                    "TURNSTREAM_REDIS_URL is unset: started an EMBEDDED redis-server at %s, without persistence "
                    "(development only; TURNSTREAM_EMBEDDED=never forbids this)",
                    settings.redis_url,
                )
            return run_worker(settings, args.loglevel or settings.log_level)
    except StackError as error:
        raise CliError(configured.redact(str(error))) from None


def run_worker(settings: Settings, loglevel: str, on_app: Callable[[faust.App], None] | None = None) -> int:
    """Run a Faust worker in this process until it is stopped, logging at `loglevel` in settings.log_format;
    returns its exit status. `on_app` registers more on the app before it starts (a shadow's progress display)."""
    import asyncio

    from prometheus_client import start_http_server

    from turnstream.agents.app import create_app
    from turnstream.embeddings.base import EmbeddingError
    from turnstream.embeddings.process import start_embedding
    from turnstream.kafka import idempotence
    from turnstream.kafka.admin import ensure_topics
    from turnstream.kafka.topic_creation import TopicLayoutError
    from turnstream.lifecycle.shutdown import Worker
    from turnstream.lifecycle.startup import ServicesUnavailable, cluster_id, ready_line, wait_for_services
    from turnstream.stack.services import tuned_for_broker
    from turnstream.tracing import export_from_env

    async def prepare() -> tuple[TopicsReady, str, Settings]:
        await wait_for_services(settings)
        return await ensure_topics(settings), await cluster_id(settings), await idempotence.resolved(settings)

    try:  # a missing or broken model is one line now, not a traceback at the first turn
        embedding = start_embedding(settings)
    except EmbeddingError as error:
        raise CliError(str(error)) from None
    try:
        topics, cluster, settings = asyncio.run(prepare())
    except (ServicesUnavailable, TopicLayoutError) as error:
        raise CliError(settings.redact(str(error))) from None
    settings = tuned_for_broker(settings, cluster)  # Tansu's short fetch wait, however the worker found it
    if settings.metrics_port is not None:
        start_http_server(settings.metrics_port, addr=settings.web_bind)
    export_from_env()
    retried_lookups_as_warnings()
    app = create_app(settings, topics.replication_factor, embedding)
    if on_app is not None:
        on_app(app)

    def ready() -> str:
        assigned = (tp.partition for tp in app.consumer.assignment() if tp.topic == settings.turns_topic)
        return ready_line(app.conf.id, settings.turns_topic, assigned, settings.log_format)  # the app id: the group

    worker = Worker(
        app,
        ready=ready,
        loglevel=loglevel,
        quiet=True,
        logging_config=faust_logging_config(loglevel, settings.log_format),
        stop_timeout=settings.stop_timeout_seconds,
    )
    # What the start-up built (every module, the app) lives as long as the process: frozen, the collector's
    # full passes no longer walk it. They come every few seconds while a worker drains, since each batch
    # restores every session state it touches, and frozen they take a small part of their time (tools/turnstream_tools/benchmarks/HISTORY.md, 2026-11-30).
    gc.freeze()
    try:
        worker.execute_from_commandline()
    except SystemExit as exit_:
        return int(exit_.code or 0)
    finally:
        if embedding is not None:
            embedding.close()
    return 0
