"""A consumed record decoded once, where it enters the session agent: what it is, its decoded item, its session
key, its headers and trace context. Stepping, dead-lettering, forwarding, log fields and spans all read the
envelope; none of them parses the value or scans the headers again."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any, Protocol

from turnstream.agents.fields import Record, known_fields
from turnstream.schemas.headers import TRACE_HEADERS, header_items, trace_id_of, traceparent
from turnstream.schemas.ids import Forward
from turnstream.session.records import Item, Kind, record_of

log = logging.getLogger(__name__)


class ConsumedRecord(Record, Protocol):
    """A consumed record with the time it was produced (Faust's Message)."""

    @property
    def timestamp(self) -> float:
        """Epoch seconds."""
        ...


class Consumed(Protocol):
    """A consumed event as the session agent reads it: its record (Faust's Event; turnstream.testing's stand-in)."""

    @property
    def message(self) -> ConsumedRecord: ...


@dataclass(frozen=True, slots=True)
class Envelope:
    """One record as the session agent knows it once decoded."""

    kind: Kind
    event: Consumed
    """The consumed event: acknowledged with its batch, and a Table row is attributed to it."""
    headers: list[tuple[str, bytes]]
    """The record's headers as (name, value) pairs, in order."""
    traceparent: str | None
    """Its valid W3C traceparent header, if any."""
    item: Item | None = None
    key: str | None = None
    """The session key its item names (None for a tombstone or a refused record)."""
    forward: Forward | None = None
    """For a misrouted turn: the key it must be forwarded under."""
    refusal: tuple[str, str] | None = None
    """For a refused record: (reason, detail)."""
    turn_id: str | None = None
    """The turn id it carries (a turn's, or one found in a refused value), for log lines."""

    @property
    def carried(self) -> list[tuple[str, bytes]]:
        """Its trace-context headers, to put on every record produced for it."""
        return [(name, value) for name, value in self.headers if name.lower() in TRACE_HEADERS]

    @property
    def source(self) -> str:
        """`topic/partition/offset` of the record."""
        message = self.event.message
        return f"{message.topic}/{message.partition}/{message.offset}"

    def fields(self, session: str | None = None, turn_id: str | None = None) -> dict[str, Any]:
        """`extra=` fields of a log line about this record (agents/fields.py); the session is the record's key
        unless named."""
        return known_fields(self.event.message, session, turn_id or self.turn_id, trace_id_of(self.traceparent))


def open_envelope(event: Consumed, summaries_topic: str, max_content_bytes: int) -> Envelope:
    """Decode `event` once (session/records.py); never raises: what cannot be decoded is a refused envelope (reason
    "internal" for an unexpected error, which is logged)."""
    message = event.message
    try:
        record = record_of(
            message.topic, message.key, message.value, message.headers, summaries_topic, max_content_bytes
        )
    except Exception as error:  # noqa: BLE001 - one bad record must not take the batch (or the worker) down
        headers = header_items(message.headers)
        envelope = Envelope("refused", event, headers, traceparent(headers), refusal=("internal", repr(error)))
        log.exception(
            "event at %s/%s failed; dead-lettered", message.partition, message.offset, extra=envelope.fields()
        )
        return envelope
    return Envelope(
        record.kind,
        event,
        record.headers,
        traceparent(record.headers),
        record.item,
        record.key,
        record.forward,
        record.refusal,
        record.turn_id,
    )
