"""Whether turnstream's producers are idempotent: where the broker issues producer ids, a retry through a broker
fault (a leader lost between the write and its ack) cannot write a record twice.

Apache Kafka issues producer ids; the embedded Tansu answers InitProducerId with an error, so "auto" asks the
broker once. The worker asks before its Faust app starts and gives every producer it opens the answer
(`resolved`); a gateway's TurnProducer and `turnstream forget` try at each start (`started`), and warn once a
process.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

from turnstream.connections import kafka_options
from turnstream.settings import KafkaSettings

if TYPE_CHECKING:
    from aiokafka import AIOKafkaProducer

log = logging.getLogger(__name__)

S = TypeVar("S", bound=KafkaSettings)

_warned: set[str] = set()
"""The brokers (bootstrap servers) this process has warned about: a gateway starts producers again and again, and
the same broker gives the same answer each time."""


async def started(make: Callable[[bool], AIOKafkaProducer], settings: KafkaSettings) -> tuple[AIOKafkaProducer, bool]:
    """The producer `make(idempotent)` builds, started, and whether it is idempotent: TURNSTREAM_IDEMPOTENT_PRODUCER
    as set when "on" or "off"; "auto" starts an idempotent one (it asks the broker for a producer id) and, where the
    broker issues none, a plain one, warning once a process.

    A broker that cannot be reached raises aiokafka's KafkaConnectionError, as any producer's start would; so does
    "on" where the broker issues no producer ids.
    """
    from aiokafka.errors import KafkaConnectionError, KafkaError

    mode = settings.idempotent_producer
    if mode != "auto":
        return await _start(make(mode == "on")), mode == "on"
    try:
        return await _start(make(True)), True
    except KafkaConnectionError:
        raise
    except KafkaError as error:
        broker = str(settings.kafka_url)
        level = logging.DEBUG if broker in _warned else logging.WARNING
        log.log(level, "broker cannot issue producer ids (%r): producing without idempotence", error)
        _warned.add(broker)
        return await _start(make(False)), False


async def _start(producer: AIOKafkaProducer) -> AIOKafkaProducer:
    try:
        await producer.start()
    except BaseException:
        await producer.stop()  # a failed start leaves its client open
        raise
    return producer


async def idempotent(settings: KafkaSettings) -> bool:
    """Whether producers to `settings`' broker are idempotent: as set when "on" or "off"; for "auto", `started`'s
    answer, with a producer started to ask."""
    from aiokafka import AIOKafkaProducer

    if settings.idempotent_producer != "auto":
        return settings.idempotent_producer == "on"

    def probe(asked: bool) -> AIOKafkaProducer:
        return AIOKafkaProducer(**kafka_options(settings), enable_idempotence=asked)

    producer, answer = await started(probe, settings)
    await producer.stop()
    return answer


async def resolved(settings: S) -> S:
    """`settings` with TURNSTREAM_IDEMPOTENT_PRODUCER "auto" replaced by what the broker allows ("on" or "off")."""
    return settings.model_copy(update={"idempotent_producer": "on" if await idempotent(settings) else "off"})
