"""TurnProducer: a gateway's turns into the input topic, keyed by session so a session keeps one partition.

aiokafka is imported when a producer is made, not with this module: `turnstream.client` names TurnProducer,
and a gateway that only reads loads no Kafka client.
"""

from __future__ import annotations

import asyncio
import logging
from types import TracebackType
from typing import TYPE_CHECKING, Any

import orjson

from turnstream.client.errors import ShadowSettingsError
from turnstream.connections import kafka_options
from turnstream.schemas.headers import Headers, header_items
from turnstream.schemas.turn import Turn, encode_turn, validate_turn
from turnstream.settings import Settings
from turnstream.tracing import inject

if TYPE_CHECKING:
    from aiokafka import AIOKafkaProducer
    from aiokafka.structs import RecordMetadata

log = logging.getLogger(__name__)

LINGER_MS = 5
"""Batching delay (ms): how long the producer waits for more records before it sends a batch."""
_said: set[str] = set()
"""What this process has warned about once already: a gateway starts producers again and again (each GatewayClient,
each `produce`), and the same broker gives the same answer each time."""


def warn_once(what: str, message: str, *args: object) -> None:
    """`message` at warning level the first time per process for `what`, at debug level after that."""
    log.log(logging.DEBUG if what in _said else logging.WARNING, message, *args)
    _said.add(what)


def turn_record(turn: Turn | dict[str, Any]) -> tuple[Turn, bytes]:
    """`turn` validated (TurnError) and its input-topic value: a Turn's JSON, or a dict exactly as given."""
    if isinstance(turn, Turn):
        return turn, encode_turn(turn)
    return validate_turn(turn), orjson.dumps(turn)


class TurnProducer:
    """Produces turns with acks=all and Java-compatible murmur2 partitioning of the session key."""

    def __init__(self, settings: Settings, **producer_options: Any) -> None:
        """`producer_options` go to AIOKafkaProducer (e.g. linger_ms, request_timeout_ms)."""
        from aiokafka.partitioner import DefaultPartitioner

        if settings.is_shadow:  # a shadow's settings: a send would reach the live worker's turns (a forget, a pop…)
            raise ShadowSettingsError(
                f"TURNSTREAM_TURNS_FROM={settings.turns_from} makes these a shadow's settings, and a shadow never "
                f"produces into the turns topic it reads ({settings.turns_topic}): unset it to produce"
            )
        self.settings = settings
        self.topic = settings.turns_topic
        self.idempotent = False  # what the broker allowed: known after start()
        self._options: dict[str, Any] = {
            **kafka_options(settings),  # bootstrap servers, TLS and SASL
            "acks": "all",
            "linger_ms": LINGER_MS,
            # murmur2 of the key, as the Java client: a session lands where Java and Faust put it
            "partitioner": DefaultPartitioner(),
            **producer_options,
        }
        self._producer: AIOKafkaProducer | None = None

    async def start(self) -> None:
        """Connect, and create the turns topic with turn_partitions if it does not exist yet: the first send would
        otherwise have the broker auto-create it with its own partition count, which no worker accepts."""
        from turnstream.kafka import idempotence
        from turnstream.kafka.topic_creation import TopicLayoutError, ensure_turns_topic

        self._producer, self.idempotent = await idempotence.started(self._new_producer, self.settings)
        try:
            await ensure_turns_topic(self.settings)
        except TopicLayoutError as error:
            # a gateway may lack the right to create topics (ACLs) where an operator created them already: it
            # still produces, and the worker checks the layout
            warn_once("turns topic", "cannot make sure %s exists (%s): producing anyway", self.topic, error)

    def _new_producer(self, idempotent: bool) -> AIOKafkaProducer:
        from aiokafka import AIOKafkaProducer

        return AIOKafkaProducer(enable_idempotence=idempotent, **self._options)

    @property
    def producer(self) -> AIOKafkaProducer:
        if self._producer is None:
            raise RuntimeError("TurnProducer is not started: use `async with` or await start()")
        return self._producer

    async def send(self, turn: Turn | dict[str, Any], headers: Headers = None) -> asyncio.Future[RecordMetadata]:
        """Queue `turn`; the returned future resolves once the broker has it (await it, or flush()).

        A dict is validated (TurnError) and sent exactly as given, so its JSON stays the caller's. `headers`
        (name -> bytes, or pairs) go on the record; a `traceparent` among them follows the turn through the
        worker (its log lines, spans, summary requests, dead letters). Without one, the caller's current
        OpenTelemetry span is put there when the otel extra is installed.
        """
        valid, value = turn_record(turn)
        return await self.send_raw(valid.session_key.encode(), value, headers)

    async def send_raw(
        self, key: bytes | None, value: bytes | None, headers: Headers = None
    ) -> asyncio.Future[RecordMetadata]:
        """Queue a value as it is, valid or not (for tools and tests that need malformed input)."""
        sent: asyncio.Future[RecordMetadata] = await self.producer.send(
            self.topic, value=value, key=key, headers=inject(header_items(headers)) or None
        )
        return sent

    async def flush(self) -> None:
        """Wait until every queued turn is acknowledged."""
        await self.producer.flush()

    async def stop(self) -> None:
        if self._producer is not None:
            await self._producer.stop()
            self._producer = None

    async def __aenter__(self) -> TurnProducer:
        await self.start()
        return self

    async def __aexit__(self, *exc: type[BaseException] | BaseException | TracebackType | None) -> None:
        await self.stop()
