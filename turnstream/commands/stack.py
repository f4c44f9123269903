"""`turnstream stack`: run a broker (embedded Tansu or Apache Kafka) and Redis in the foreground until stopped."""

from __future__ import annotations

import argparse
import asyncio
import signal
import sys
import threading
import time

from turnstream.cli import CliError
from turnstream.commands._args import port
from turnstream.kafka.admin import ensure_topics
from turnstream.kafka.topic_creation import TopicLayoutError
from turnstream.settings import Settings
from turnstream.stack.services import EmbeddedStack, StackError

_POLL_SECONDS = 0.5
RESTARTABLE = ("redis",)
"""Services brought back when they exit. Not the broker: Tansu keeps topics in memory, a new one has none,
and the stack's Apache Kafka keeps its log in a folder of its own, removed when it stops."""
MAX_RESTARTS = 5
RESTART_WINDOW_SECONDS = 60.0
"""More than MAX_RESTARTS of one service within this window is a crash loop: the stack gives up and exits."""


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "stack",
        help="run a Kafka broker (embedded Tansu, or Apache Kafka) and redis-server until Ctrl-C or SIGTERM",
        description=(
            "Start a broker and redis-server on loopback, create the worker's topics (TURNSTREAM_TOPIC_PREFIX, "
            "TURNSTREAM_TURN_PARTITIONS), print KAFKA_URL=… and REDIS_URL=… and READY, "
            "and run until Ctrl-C or SIGTERM. The broker is the embedded Tansu (pip only) or, with "
            "--broker kafka, Apache Kafka (KRaft) from the jars `make kafka` fetches: one node, or with --brokers 3 "
            "a cluster that replicates every topic three times and needs two replicas in sync "
            "(needs Java 17+; TURNSTREAM_KAFKA_JARS names another folder). A redis-server that exits is "
            "started again on the same port (empty: it keeps nothing on disk); if the broker exits, the "
            "stack stops. Everything is gone when it stops."
        ),
    )
    parser.add_argument(
        "--broker",
        choices=("tansu", "kafka"),
        default="tansu",
        help="tansu: the embedded broker (default); kafka: Apache Kafka from `make kafka`'s jars",
    )
    parser.add_argument(
        "--brokers",
        type=int,
        choices=(1, 3),
        default=1,
        help="with --broker kafka: 1 node (default), or a cluster of 3 (replication factor 3, min.insync.replicas=2)",
    )
    parser.add_argument("--kafka-port", type=port, default=0, help="broker port (default: a free one)")
    parser.add_argument("--redis-port", type=port, default=0, help="Redis port (default: a free one)")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    if args.brokers > 1 and args.broker != "kafka":
        raise CliError("--brokers 3 needs --broker kafka: the embedded Tansu runs as one node")
    stop = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: stop.set())
    settings = Settings()
    try:
        stack = EmbeddedStack(
            kafka_brokers=args.brokers,
            kafka_port=args.kafka_port,
            redis_port=args.redis_port,
            broker=args.broker,
            kafka_jars=settings.kafka_jars,
        )
        with stack:
            create_topics(settings, str(stack.kafka_url))
            print(f"KAFKA_URL={stack.kafka_url}", flush=True)
            print(f"REDIS_URL={stack.redis_url}", flush=True)
            print("READY", flush=True)
            restarts: dict[str, list[float]] = {}
            while not stop.wait(_POLL_SECONDS):
                dead = stack.dead_service()
                if dead is None:
                    continue
                why = f"{dead.name} exited with status {dead.process.returncode}: {dead.log_tail()}"
                now = time.monotonic()
                recent = [t for t in restarts.get(dead.name, []) if now - t < RESTART_WINDOW_SECONDS]
                if dead.name not in RESTARTABLE or len(recent) >= MAX_RESTARTS:
                    raise CliError(why)
                restarts[dead.name] = [*recent, now]
                print(f"turnstream: {why}; restarting it on port {dead.port}", file=sys.stderr, flush=True)
                stack.restart(dead)
    except StackError as error:
        raise CliError(str(error)) from None
    return 0


def create_topics(settings: Settings, kafka_url: str) -> None:
    """The worker's topics on the stack's broker, before anything can produce to it: a first turn produced before
    any worker started would have the broker create the turns topic with its own partition count."""
    # the stack's broker is plain loopback, whatever the environment says of another broker's security
    on_stack = settings.model_copy(update={"kafka_url": kafka_url, "kafka_security_protocol": "PLAINTEXT"})
    try:
        asyncio.run(ensure_topics(on_stack))
    except TopicLayoutError as error:
        raise CliError(str(error)) from None
    print(
        f"turnstream: created the topics of TURNSTREAM_TOPIC_PREFIX={settings.topic_prefix}, "
        f"{settings.turn_partitions} partitions each (TURNSTREAM_TURN_PARTITIONS)",
        file=sys.stderr,
        flush=True,
    )
