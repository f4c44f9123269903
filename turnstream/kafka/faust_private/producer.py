"""Faust's producer: idempotent where the broker allows it, and sending what it buffers now rather than on its own
schedule.

Relies on
- `faust.transport.drivers.aiokafka.Producer._settings_extra`: the options its aiokafka producer gets beyond
  Faust's settings, which have none for idempotence;
- `faust.transport.producer.Producer.buffer` (a `ProducerBuffer`: `size`, `flush_atmost`): a Table write queues
  its changelog record there, and Faust's own flush before a commit gives up on a record after 0.1 s. Faust
  offers no public call that waits until the buffer is sent.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from faust.transport.drivers import aiokafka as aiokafka_driver
from faust.types import ProducerT


class IdempotentProducer(aiokafka_driver.Producer):
    """Faust's aiokafka producer, idempotent when its app says so (`ConsumerApp.idempotent_producer`): a retry
    through a broker fault then writes no changelog, journal or forwarded record twice."""

    def _settings_extra(self) -> Mapping[str, Any]:
        extra = dict(super()._settings_extra())
        if getattr(self.app, "idempotent_producer", False):
            extra["enable_idempotence"] = True
        return extra


async def send_buffered(producer: ProducerT, deadline: float) -> bool:
    """Hand the producer's buffered records to aiokafka until none is left or `deadline` (monotonic) passes;
    whether none is left."""
    buffer = producer.buffer
    while buffer.size and time.monotonic() < deadline:
        await buffer.flush_atmost(buffer.size)
    return not buffer.size
