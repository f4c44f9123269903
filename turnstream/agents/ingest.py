"""What the session agent re-produces of its input: anything unusable to the dead-letter topic, a turn keyed by
anything but its session key back to the turns topic under that key, a held turn round again in seq order."""

from __future__ import annotations

import logging

import faust

from turnstream.agents.envelope import Envelope
from turnstream.metrics import dead_letters_total, rekeyed_total
from turnstream.schemas.headers import (
    ORIGINAL_KEY_HEADER,
    OWN_HEADERS,
    REASON_HEADER,
    SOURCE_HEADER,
    dead_letter_headers,
)
from turnstream.schemas.turn import Turn, encode_turn

log = logging.getLogger(__name__)


async def dead_letter(dlq: faust.TopicT, envelope: Envelope, reason: str, detail: str) -> None:
    """Forward the original bytes and headers with why they were refused, and wait until the broker has them."""
    message, source = envelope.event.message, envelope.source
    headers = dead_letter_headers(envelope.headers, reason, detail, source)
    sent = await dlq.send(key=message.key, value=message.value, headers=headers)
    await sent  # the offset is committed only after this: the reject is never lost
    dead_letters_total.labels(reason).inc()
    fields = envelope.fields()
    log.warning(
        "dead-lettered %s (session %s, turn %s): %s (%s)",
        source,
        fields["session"],
        fields["turn_id"],
        reason,
        detail,
        extra={**fields, "reason": reason},
    )


async def forward(turns: faust.TopicT, envelope: Envelope) -> None:
    """Re-produce a misrouted turn's original bytes under its session key, and wait until the broker has them.

    Its offset is acknowledged only after this, so the turn is never lost; a crash before that forwards
    it again, and the session's dedup applies it once. Its own headers (a traceparent) go with it.
    """
    message, source, where = envelope.event.message, envelope.source, envelope.forward
    if where is None:
        raise ValueError(f"{source} is a {envelope.kind} record, not a misrouted turn")
    headers = [(name, value) for name, value in envelope.headers if name not in (*OWN_HEADERS, ORIGINAL_KEY_HEADER)]
    headers += [(REASON_HEADER, where.reason.encode()), (SOURCE_HEADER, source.encode())]
    if message.key is not None:
        headers.append((ORIGINAL_KEY_HEADER, message.key[:1024]))
    sent = await turns.send(key=where.key, value=message.value, headers=headers)
    await sent
    rekeyed_total.labels(where.reason).inc()
    log.warning(
        "forwarded %s under its session key %r: %s (key was %r)",
        source,
        where.key.decode(),
        where.reason,
        message.key if message.key is None else message.key[:64],
        extra={**envelope.fields(), "reason": where.reason},
    )


async def send_round(turns: faust.TopicT, turn: Turn) -> None:
    """Send a held turn round again through its session's partition, and wait until the broker has it."""
    sent = await turns.send(
        key=turn.session_key.encode(), value=encode_turn(turn), headers={REASON_HEADER: b"reordered"}
    )
    await sent
    rekeyed_total.labels("reordered").inc()
    log.debug("sent turn %s of %s round again, in seq order", turn.turn_id, turn.session_key)
