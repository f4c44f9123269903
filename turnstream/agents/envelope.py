"""A consumed record decoded once, where it enters the session agent: what it is, its decoded item, its session
key, its headers and trace context. Stepping, dead-lettering, forwarding, log fields and spans all read the
envelope; none of them parses the value or scans the headers again."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any, Literal

from faust.types import EventT

from turnstream.agents.fields import known_fields
from turnstream.schemas import Turn, TurnError, decode_turn
from turnstream.schemas.control import ForgetRequest, PopRequest, parse_forget, parse_pop
from turnstream.schemas.ids import Forward
from turnstream.session import Forwarded, SummaryResult, classify
from turnstream.tracing import TRACE_HEADERS, header_items, trace_id_of, traceparent

log = logging.getLogger(__name__)

REASON_HEADER = "x-turnstream-reason"
"""On a record a worker produced (a dead letter, a forwarded turn): why."""

Kind = Literal["turn", "forwarded", "misrouted", "summary", "pop", "forget", "tombstone", "refused"]
"""turn: apply here; forwarded: a turn a worker forwarded here (may wait for the turns before it); misrouted: a
turn keyed otherwise, to forward under its session key; summary: the summarizer's answer; pop, forget: control
records; tombstone: a null value; refused: not decodable, to dead-letter."""
Item = Turn | Forwarded | SummaryResult | PopRequest | ForgetRequest


@dataclass(frozen=True, slots=True)
class Envelope:
    """One record as the session agent knows it once decoded."""

    kind: Kind
    event: EventT
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


def open_envelope(event: EventT, summaries_topic: str, max_content_bytes: int) -> Envelope:
    """Decode `event` once; never raises: what cannot be decoded is a refused envelope (reason "internal" for
    an unexpected error, which is logged)."""
    message = event.message
    headers = header_items(message.headers)
    parent = traceparent(headers)
    if message.value is None:
        return Envelope("tombstone", event, headers, parent)
    try:
        return _decoded(event, message.value, headers, parent, summaries_topic, max_content_bytes)
    except Exception as error:  # noqa: BLE001 - one bad record must not take the batch (or the worker) down
        envelope = Envelope("refused", event, headers, parent, refusal=("internal", repr(error)))
        log.exception("event at %s/%s failed; dead-lettered", message.partition, message.offset, extra=envelope.fields())
        return envelope


def _decoded(event: EventT, value: bytes, headers: list[tuple[str, bytes]], parent: str | None, summaries_topic: str,
             max_content_bytes: int) -> Envelope:
    if event.message.topic == summaries_topic:
        summary = SummaryResult.from_bytes(value)
        return Envelope("summary", event, headers, parent, summary, summary.session_key)
    if (request := parse_forget(value)) is not None:
        return Envelope("forget", event, headers, parent, request, request.session_key)
    if (pop := parse_pop(value)) is not None:
        return Envelope("pop", event, headers, parent, pop, pop.session_key)
    try:
        turn = decode_turn(value, max_content_bytes)
    except TurnError as error:
        return Envelope("refused", event, headers, parent, refusal=(error.reason, error.detail), turn_id=error.turn_id)
    came_forwarded = any(name == REASON_HEADER for name, _ in headers)  # a worker produced it, not a gateway
    where = classify(turn, event.message.key, came_forwarded)
    if isinstance(where, Forward):
        return Envelope("misrouted", event, headers, parent, turn, turn.session_key, forward=where, turn_id=turn.turn_id)
    return Envelope("forwarded" if isinstance(where, Forwarded) else "turn", event, headers, parent, where,
                    turn.session_key, turn_id=turn.turn_id)
