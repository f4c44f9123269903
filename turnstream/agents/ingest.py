"""Ingest: decode and validate a raw turn; anything unusable goes to the dead-letter topic."""

from __future__ import annotations

import logging

import faust
from faust.types import EventT

from turnstream.agents.fields import record_fields
from turnstream.streams.metrics import dead_letters_total
from turnstream.tracing import header_items

log = logging.getLogger(__name__)

REASON_HEADER = "x-turnstream-reason"
DETAIL_HEADER = "x-turnstream-detail"
SOURCE_HEADER = "x-turnstream-source"
"""`topic/partition/offset` of the original record."""
OWN_HEADERS = (REASON_HEADER, DETAIL_HEADER, SOURCE_HEADER)


def dead_letter_headers(original: list[tuple[str, bytes]], reason: str, detail: str, source: str) -> list[tuple[str, bytes]]:
    """The original record's headers (its traceparent among them), then why it was refused. A record that was
    dead-lettered before loses its old reason headers, so a dead letter never carries two reasons."""
    kept = [(name, value) for name, value in original if name not in OWN_HEADERS]
    return kept + [(REASON_HEADER, reason.encode()), (DETAIL_HEADER, detail.encode()[:1024]), (SOURCE_HEADER, source.encode())]


async def dead_letter(dlq: faust.TopicT, event: EventT, reason: str, detail: str) -> None:
    """Forward the original bytes and headers with why they were refused, and wait until the broker has them."""
    message = event.message
    source = f"{message.topic}/{message.partition}/{message.offset}"
    headers = dead_letter_headers(header_items(message.headers), reason, detail, source)
    sent = await dlq.send(key=message.key, value=message.value, headers=headers)
    await sent  # the offset is committed only after this: the reject is never lost
    dead_letters_total.labels(reason).inc()
    fields = record_fields(message)
    log.warning("dead-lettered %s (session %s, turn %s): %s (%s)", source, fields["session"], fields["turn_id"],
                reason, detail, extra={**fields, "reason": reason})
