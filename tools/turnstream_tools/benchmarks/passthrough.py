"""The yardstick worker: a Faust app that does the least a stream worker can do with each turn.

`python -m turnstream_tools.benchmarks.passthrough count|set`, configured by TURNSTREAM_* variables like a worker; it
reads its own `<prefix>.turns` topic, made exactly as the worker's (same partitions, same bytes produced):

- count: counts the events; every COUNT_REPORT_SECONDS the count is SET in Redis for the bench to read.
- set:   SETs each turn's bytes in Redis under the session key and announces it (PUBLISH "partition:offset")
         in the same round trip, as the real sink writes and publishes in one script.
"""

from __future__ import annotations

import sys

import faust

from turnstream.kafka.app import faust_app
from turnstream.kafka.timers import timer
from turnstream.lifecycle.shutdown import Worker
from turnstream.redis.connect import redis_client
from turnstream.settings import Settings

COUNT_REPORT_SECONDS = 0.005
MODES = ("count", "set")


def count_key(settings: Settings) -> str:
    return f"{settings.topic_prefix}:count"


def value_key(settings: Settings, session_key: bytes) -> bytes:
    return f"{settings.topic_prefix}:value:".encode() + session_key


def updates_channel(settings: Settings) -> str:
    return f"{settings.topic_prefix}:updates"


def create_passthrough_app(settings: Settings, mode: str) -> faust.App:
    """A Faust app configured as the worker's (faust_app), with one agent at concurrency 1 doing `mode`."""
    app = faust_app(settings, "passthrough")
    topic = app.topic(
        settings.turns_topic,
        key_type=bytes,
        value_type=bytes,
        key_serializer="raw",
        value_serializer="raw",
        partitions=settings.turn_partitions,
    )
    redis = redis_client(settings)
    if mode == "count":
        counted = [0, 0]  # events seen, events reported

        @app.agent(topic, name=f"{settings.topic_prefix}.count", concurrency=1)
        async def count(stream: faust.StreamT[bytes]) -> None:
            async for _ in stream.events():
                counted[0] += 1

        @timer(app, COUNT_REPORT_SECONDS)
        async def report() -> None:
            if counted[0] != counted[1]:
                counted[1] = counted[0]
                await redis.set(count_key(settings), counted[1])
    else:
        channel = updates_channel(settings)

        @app.agent(topic, name=f"{settings.topic_prefix}.set", concurrency=1)
        async def set_value(stream: faust.StreamT[bytes]) -> None:
            async for event in stream.events():
                message = event.message
                async with redis.pipeline(transaction=False) as pipe:
                    pipe.set(value_key(settings, message.key), message.value)
                    pipe.publish(channel, f"{message.partition}:{message.offset}")
                    await pipe.execute()

    return app


def main(argv: list[str]) -> int:
    if len(argv) != 1 or argv[0] not in MODES:
        print(f"usage: python -m turnstream_tools.benchmarks.passthrough {'|'.join(MODES)}", file=sys.stderr)
        return 2
    settings = Settings()
    # the worker's own Worker class: the yardstick pays no overhead the worker does not
    worker = Worker(
        create_passthrough_app(settings, argv[0]),
        loglevel="warning",
        quiet=True,
        stop_timeout=settings.stop_timeout_seconds,
    )
    try:
        worker.execute_from_commandline()
    except SystemExit as exit_:
        return int(exit_.code or 0)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
