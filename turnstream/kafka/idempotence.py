"""Whether turnstream's producers are idempotent: where the broker issues producer ids, a retry through a broker
fault (a leader lost between the write and its ack) cannot write a record twice.

Apache Kafka issues producer ids; the embedded Tansu answers InitProducerId with an error, so "auto" asks the
broker once. The worker asks before its Faust app starts and gives every producer it opens the answer
(`resolved`); a gateway's TurnProducer asks at each start, and warns once a process.
"""

from __future__ import annotations

import logging
from typing import TypeVar

from turnstream.connections import kafka_options
from turnstream.settings import KafkaSettings

log = logging.getLogger(__name__)

S = TypeVar("S", bound=KafkaSettings)

_warned: set[str] = set()
"""The brokers (bootstrap servers) this process has warned about: a gateway starts producers again and again, and
the same broker gives the same answer each time."""


async def idempotent(settings: KafkaSettings) -> bool:
    """Whether producers to `settings`' broker are idempotent: TURNSTREAM_IDEMPOTENT_PRODUCER as set when "on" or
    "off"; "auto" asks the broker for a producer id, and warns (once a process) where it issues none.

    A broker that cannot be reached raises aiokafka's KafkaConnectionError, as any producer's start would.
    """
    from aiokafka import AIOKafkaProducer
    from aiokafka.errors import KafkaConnectionError, KafkaError

    if settings.idempotent_producer != "auto":
        return settings.idempotent_producer == "on"
    probe = AIOKafkaProducer(**kafka_options(settings), enable_idempotence=True)
    try:
        await probe.start()  # asks for the producer id
    except KafkaConnectionError:
        raise
    except KafkaError as error:
        broker = str(settings.kafka_url)
        level = logging.DEBUG if broker in _warned else logging.WARNING
        log.log(level, "broker cannot issue producer ids (%r): producing without idempotence", error)
        _warned.add(broker)
        return False
    finally:
        await probe.stop()
    return True


async def resolved(settings: S) -> S:
    """`settings` with TURNSTREAM_IDEMPOTENT_PRODUCER "auto" replaced by what the broker allows ("on" or "off")."""
    return settings.model_copy(update={"idempotent_producer": "on" if await idempotent(settings) else "off"})
