"""Sending what Faust's producer buffers, now rather than on its own schedule.

Relies on `faust.transport.producer.Producer.buffer` (a `ProducerBuffer`: `size`, `flush_atmost`): a
Table write queues its changelog record there, and Faust's own flush before a commit gives up on a record
after 0.1 s. Faust offers no public call that waits until the buffer is sent.
"""

from __future__ import annotations

import time

from faust.types import ProducerT


async def send_buffered(producer: ProducerT, deadline: float) -> bool:
    """Hand the producer's buffered records to aiokafka until none is left or `deadline` (monotonic) passes;
    whether none is left."""
    buffer = producer.buffer
    while buffer.size and time.monotonic() < deadline:
        await buffer.flush_atmost(buffer.size)
    return not buffer.size
