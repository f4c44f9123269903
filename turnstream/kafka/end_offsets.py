"""End offsets as a fetch reports them: where table recovery must read up to.

Faust recovers a Table by reading its changelog up to the end offsets that ListOffsets(latest) gives. The
embedded broker answers that request with the last record batch's base offset plus one, as if a batch
held one record: after a batch of Table rows, the last rows of the batch are not counted, recovery stops
before them, and the sessions they hold fall back to an older state (turns applied before a rebalance
are then missing from the context for good). The high watermark in a fetch response is right on every
broker, so each listed end is confirmed by fetching the partition's last listed record.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from typing import Any, TypeVar

from aiokafka import AIOKafkaConsumer, TopicPartition

log = logging.getLogger(__name__)
P = TypeVar("P", bound=tuple[str, int])  # a topic partition: Faust's TP, aiokafka's TopicPartition
E = TypeVar("E", int, int | None)  # an end offset: Faust's highwaters have one for every partition, a listing may not
CONFIRM_TIMEOUT_SECONDS = 10.0


async def fetched_end_offsets(options: Mapping[str, Any], listed: Mapping[P, E]) -> dict[P, E]:
    """`listed` with each non-empty partition's end raised to the high watermark a fetch reports.

    A partition the fetches do not reach within CONFIRM_TIMEOUT_SECONDS keeps its listed end (logged).
    """
    ends = dict(listed)
    pending = {TopicPartition(tp[0], tp[1]): tp for tp, end in listed.items() if end}
    last = {
        TopicPartition(tp[0], tp[1]): end - 1 for tp, end in listed.items() if end
    }  # the last record ListOffsets counts
    if not pending:
        return ends
    consumer = AIOKafkaConsumer(**options, group_id=None, enable_auto_commit=False, fetch_max_wait_ms=50)
    await consumer.start()
    try:
        consumer.assign(list(pending))
        for tp in pending:
            consumer.seek(tp, last[tp])
        deadline = time.monotonic() + CONFIRM_TIMEOUT_SECONDS
        while pending and time.monotonic() < deadline:
            await consumer.getmany(*pending, timeout_ms=200, max_records=1)
            for tp in [tp for tp in pending if consumer.highwater(tp) is not None]:
                key = pending.pop(tp)
                ends[key] = max(ends[key] or 0, consumer.highwater(tp))
    finally:
        await consumer.stop()
    if pending:
        log.warning("end offsets of %s not confirmed by a fetch; recovery reads up to the listed ones", sorted(pending))
    return ends
