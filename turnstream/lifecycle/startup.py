"""A starting worker waits for its broker and Redis, with backoff and one log line per attempt, until a deadline;
once it consumes, it says so in one line."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Iterable

import orjson
from tenacity import (
    AsyncRetrying,
    RetryCallState,
    retry_if_exception_type,
    retry_if_not_exception_type,
    stop_after_delay,
    wait_exponential,
)

from turnstream.connections import kafka_options, kafka_refusal, kafka_refusal_reason
from turnstream.errors import TurnstreamError
from turnstream.logs import LogFormat, formatter
from turnstream.redis.connect import ping, redis_client
from turnstream.settings import Settings

log = logging.getLogger("turnstream.startup")

ATTEMPT_TIMEOUT_SECONDS = 10.0
"""Longest single connection attempt (an unroutable address would otherwise hang until the OS gives up)."""
BACKOFF_FIRST_SECONDS = 0.5
BACKOFF_MAX_SECONDS = 5.0


def partition_ranges(partitions: Iterable[int]) -> str:
    """Partition numbers in Faust's notation, runs joined: {0, 1, 2, 5} is `0-2,5`; none is `none`."""
    runs: list[list[int]] = []
    for number in sorted(set(partitions)):
        if runs and number == runs[-1][1] + 1:
            runs[-1][1] = number
        else:
            runs.append([number, number])
    return ",".join(f"{low}-{high}" if high > low else str(low) for low, high in runs) or "none"


def ready_line(group: str, topic: str, partitions: Iterable[int], fmt: LogFormat = "text") -> str:
    """What a worker prints on stdout once it consumes, as `turnstream stack` prints READY and `serve` SERVE_URL=:
    its consumer group, and the partitions of the turns topic it was given (another worker of the group holds
    the rest). Under TURNSTREAM_LOG_FORMAT=json it is one JSON object like every other line the worker writes, the
    same text as its `message`."""
    ranges = partition_ranges(partitions)
    line = f"READY group={group} topic={topic} partitions={ranges}"
    if fmt == "json":
        return orjson.dumps({"message": line, "group": group, "topic": topic, "partitions": ranges}).decode()
    return line


class ServicesUnavailable(TurnstreamError, RuntimeError):
    """A service did not answer before the start-up deadline, or refused us; the message is one line, secrets masked."""


class ServiceRefused(TurnstreamError, RuntimeError):
    """A service answers but refuses our credentials or its certificate is not trusted: not retried, as waiting cannot fix it."""


def startup_logging(fmt: LogFormat = "text") -> None:
    """Start-up lines on stderr, before Faust sets up its own logging: `turnstream: LEVEL message`, or JSON lines."""
    if not log.handlers:
        handler = logging.StreamHandler()
        handler.setFormatter(formatter(fmt))
        log.addHandler(handler)
        log.setLevel(logging.INFO)
        log.propagate = False


async def kafka_ready(settings: Settings) -> None:
    """Bootstrap an admin client (metadata round trip, TLS and SASL included), then close it.

    A failed bootstrap whose cause is a refused login or an untrusted certificate raises ServiceRefused.
    """
    await cluster_id(settings)


async def cluster_id(settings: Settings) -> str:
    """The broker's cluster id, from one admin client's bootstrap and cluster description (see kafka_ready)."""
    from aiokafka.admin import AIOKafkaAdminClient
    from aiokafka.errors import KafkaConnectionError

    admin = AIOKafkaAdminClient(**kafka_options(settings), request_timeout_ms=int(ATTEMPT_TIMEOUT_SECONDS * 1000))
    try:
        await admin.start()
        return str((await admin.describe_cluster())["cluster_id"])
    except KafkaConnectionError:
        refusal = await kafka_refusal(settings, ATTEMPT_TIMEOUT_SECONDS)
        if refusal is None:
            raise
        raise ServiceRefused(kafka_refusal_reason(refusal)) from None
    finally:
        await admin.close()


async def redis_ready(settings: Settings) -> None:
    client = redis_client(
        settings, socket_connect_timeout=ATTEMPT_TIMEOUT_SECONDS, socket_timeout=ATTEMPT_TIMEOUT_SECONDS
    )
    try:
        await ping(client)
    finally:
        await client.aclose()


def _reason(error: BaseException | None) -> str:
    if error is None:
        return "no answer"
    if isinstance(error, asyncio.TimeoutError):
        return f"no answer within {ATTEMPT_TIMEOUT_SECONDS:.0f}s"
    name, text = type(error).__name__, str(error)
    return (text if text.startswith(name) else f"{name}: {text}").splitlines()[0]


async def wait_until_ready(
    settings: Settings, what: str, where: str, check: Callable[[Settings], Awaitable[None]], deadline: float
) -> None:
    """Call `check` until it succeeds, with exponential backoff, until the monotonic `deadline`; a ServiceRefused
    ends the wait at once."""
    started = time.monotonic()

    def before_sleep(state: RetryCallState) -> None:
        error = state.outcome.exception() if state.outcome else None
        log.info(
            settings.redact(
                f"waiting for {what} at {where}: attempt {state.attempt_number} failed ({_reason(error)}); "
                f"next in {state.next_action.sleep if state.next_action else 0.0:.1f}s"
            )
        )

    retrying = AsyncRetrying(
        stop=stop_after_delay(max(deadline - started, 0.0)),
        wait=wait_exponential(multiplier=BACKOFF_FIRST_SECONDS, max=BACKOFF_MAX_SECONDS),
        retry=retry_if_exception_type(Exception) & retry_if_not_exception_type(ServiceRefused),
        before_sleep=before_sleep,
        reraise=True,
    )
    try:
        async for attempt in retrying:
            with attempt:
                remaining = max(deadline - time.monotonic(), 0.1)
                await asyncio.wait_for(check(settings), min(ATTEMPT_TIMEOUT_SECONDS, remaining))
    except ServiceRefused as error:
        raise ServicesUnavailable(
            settings.redact(f"{what} at {where}: authentication failed (not retried): {error}")
        ) from None
    except Exception as error:
        attempts = retrying.statistics.get("attempt_number", 1)
        raise ServicesUnavailable(
            settings.redact(
                f"{what} at {where} did not answer within {settings.startup_timeout_seconds:g}s "
                f"(TURNSTREAM_STARTUP_TIMEOUT_SECONDS, {attempts} attempts): {_reason(error)}"
            )
        ) from None


async def wait_for_services(settings: Settings) -> None:
    """Wait for the broker, then Redis, under one deadline of settings.startup_timeout_seconds."""
    deadline = time.monotonic() + settings.startup_timeout_seconds
    quiet = logging.getLogger("aiokafka")
    level = quiet.level
    quiet.setLevel(logging.CRITICAL)  # each failed attempt is our one line, not aiokafka's connection errors
    try:
        await wait_until_ready(settings, "Kafka", ",".join(settings.bootstrap_servers), kafka_ready, deadline)
        await wait_until_ready(settings, "Redis", settings.redact(settings.redis_url or ""), redis_ready, deadline)
    finally:
        quiet.setLevel(level)
    log.info("Kafka and Redis answer")
