"""Ingest: decode and validate a raw turn; anything unusable goes to the dead-letter topic."""

from __future__ import annotations

import logging

import faust
from faust.types import EventT

from turnstream.streams.metrics import dead_letters_total

log = logging.getLogger(__name__)

REASON_HEADER = "x-turnstream-reason"
DETAIL_HEADER = "x-turnstream-detail"
SOURCE_HEADER = "x-turnstream-source"
"""`topic/partition/offset` of the original record."""


async def dead_letter(dlq: faust.TopicT, event: EventT, reason: str, detail: str) -> None:
    """Forward the original bytes with why they were refused, and wait until the broker has them."""
    message = event.message
    source = f"{message.topic}/{message.partition}/{message.offset}"
    headers = {
        REASON_HEADER: reason.encode(),
        DETAIL_HEADER: detail.encode()[:1024],
        SOURCE_HEADER: source.encode(),
    }
    sent = await dlq.send(key=message.key, value=message.value, headers=headers)
    await sent  # the offset is committed only after this: the reject is never lost
    dead_letters_total.labels(reason).inc()
    log.warning("dead-lettered %s: %s (%s)", source, reason, detail)
