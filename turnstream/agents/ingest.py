"""Ingest: decode and validate a raw turn; anything unusable goes to the dead-letter topic, a turn keyed
by anything but its session key back to the turns topic under that key."""

from __future__ import annotations

import logging
from collections.abc import Mapping

import faust
from faust.types import EventT

from turnstream.schemas import Turn, encode_turn
from turnstream.schemas.keys import Forward
from turnstream.streams.metrics import dead_letters_total, rekeyed_total

log = logging.getLogger(__name__)

REASON_HEADER = "x-turnstream-reason"
DETAIL_HEADER = "x-turnstream-detail"
SOURCE_HEADER = "x-turnstream-source"
"""`topic/partition/offset` of the original record."""
ORIGINAL_KEY_HEADER = "x-turnstream-original-key"
"""On a forwarded turn: the key it arrived with (absent when it had none)."""


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


async def forward(turns: faust.TopicT, event: EventT, where: Forward) -> None:
    """Re-produce a mis-keyed turn's original bytes under its session key, and wait until the broker has them.

    Its offset is acknowledged only after this, so the turn is never lost; a crash before that forwards
    it again, and the session's dedup applies it once.
    """
    message = event.message
    source = f"{message.topic}/{message.partition}/{message.offset}"
    headers = {REASON_HEADER: where.reason.encode(), SOURCE_HEADER: source.encode()}
    if message.key is not None:
        headers[ORIGINAL_KEY_HEADER] = message.key[:1024]
    sent = await turns.send(key=where.key, value=message.value, headers=headers)
    await sent
    rekeyed_total.labels(where.reason).inc()
    log.warning("forwarded %s under its session key %r: %s (key was %r)", source, where.key.decode(), where.reason,
                message.key if message.key is None else message.key[:64])


def was_forwarded(event: EventT) -> bool:
    """A turns-topic record a worker forwarded (it carries the reason), rather than one a gateway produced."""
    headers = event.message.headers or ()
    names = headers.keys() if isinstance(headers, Mapping) else (name for name, _ in headers)
    return REASON_HEADER in names


async def send_round(turns: faust.TopicT, turn: Turn) -> None:
    """Send a held turn round again through its session's partition, and wait until the broker has it."""
    sent = await turns.send(key=turn.session_key.encode(), value=encode_turn(turn), headers={REASON_HEADER: b"reordered"})
    await sent
    rekeyed_total.labels("reordered").inc()
    log.debug("sent turn %s of %s round again, in seq order", turn.turn_id, turn.session_key)
