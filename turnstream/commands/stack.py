"""`turnstream stack`: run the embedded broker and Redis in the foreground until stopped."""

from __future__ import annotations

import argparse
import signal
import threading

from turnstream.cli import CliError
from turnstream.streams.embedded import EmbeddedStack, StackError

_POLL_SECONDS = 0.5


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "stack",
        help="run the embedded Kafka broker (Tansu) and redis-server until Ctrl-C or SIGTERM",
        description=(
            "Start the embedded Tansu broker and redis-server on loopback, print "
            "KAFKA_URL=… and REDIS_URL=… and READY, and run until Ctrl-C or SIGTERM."
        ),
    )
    parser.add_argument("--kafka-port", type=_port, default=0, help="broker port (default: a free one)")
    parser.add_argument("--redis-port", type=_port, default=0, help="Redis port (default: a free one)")
    parser.set_defaults(run=run)


def _port(text: str) -> int:
    try:
        port = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a port number: {text!r}") from None
    if not 0 < port < 65536:
        raise argparse.ArgumentTypeError(f"port out of range: {port}")
    return port


def run(args: argparse.Namespace) -> int:
    stop = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: stop.set())
    try:
        with EmbeddedStack(kafka_port=args.kafka_port, redis_port=args.redis_port) as stack:
            print(f"KAFKA_URL={stack.kafka_url}", flush=True)
            print(f"REDIS_URL={stack.redis_url}", flush=True)
            print("READY", flush=True)
            while not stop.wait(_POLL_SECONDS):
                dead = stack.dead_service()
                if dead is not None:
                    raise CliError(f"{dead.name} exited with status {dead.process.returncode}: {dead.log_tail()}")
    except StackError as error:
        raise CliError(str(error)) from None
    return 0
