"""What a consumed record is, decided once from its topic, key, value and headers (pure): a turn to apply here,
a turn a worker forwarded, a turn keyed otherwise, a summary, a control record, a tombstone, or refused."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from turnstream.schemas.control import ForgetRequest, PopRequest, parse_forget, parse_pop
from turnstream.schemas.headers import REASON_HEADER, Headers, header_items
from turnstream.schemas.ids import Forward
from turnstream.schemas.summaries import SummaryResult
from turnstream.schemas.turn import Turn, TurnError, decode_turn
from turnstream.session.reorder import Forwarded
from turnstream.session.rules import classify

Kind = Literal["turn", "forwarded", "misrouted", "summary", "pop", "forget", "tombstone", "refused"]
"""turn: apply here; forwarded: a turn a worker forwarded here (may wait for the turns before it); misrouted: a
turn keyed otherwise, to forward under its session key; summary: the summarizer's answer; pop, forget: control
records; tombstone: a null value; refused: not decodable, to dead-letter."""
Item = Turn | Forwarded | SummaryResult | PopRequest | ForgetRequest


@dataclass(frozen=True, slots=True)
class Record:
    """What one consumed record is."""

    kind: Kind
    item: Item | None = None
    key: str | None = None
    """The session key its item names (None for a tombstone or a refused record)."""
    forward: Forward | None = None
    """For a misrouted turn: the key it must be forwarded under."""
    refusal: tuple[str, str] | None = None
    """For a refused record: (reason, detail)."""
    turn_id: str | None = None
    """The turn id it carries (a turn's, or one found in a refused value), for log lines."""
    headers: list[tuple[str, bytes]] = field(default_factory=list)
    """Its headers as (name, value) pairs, in order, read once."""


def record_of(
    topic: str,
    record_key: bytes | None,
    value: bytes | None,
    headers: Headers,
    summaries_topic: str,
    max_content_bytes: int,
) -> Record:
    """Decode one record's value once; raises only on a value no rule expects (the caller refuses it)."""
    items = header_items(headers)
    if value is None:
        return Record("tombstone", headers=items)
    if topic == summaries_topic:
        summary = SummaryResult.from_bytes(value)
        return Record("summary", summary, summary.session_key, headers=items)
    if (request := parse_forget(value)) is not None:
        return Record("forget", request, request.session_key, headers=items)
    if (pop := parse_pop(value)) is not None:
        return Record("pop", pop, pop.session_key, headers=items)
    try:
        turn = decode_turn(value, max_content_bytes)
    except TurnError as error:
        return Record("refused", refusal=(error.reason, error.detail), turn_id=error.turn_id, headers=items)
    came_forwarded = any(name == REASON_HEADER for name, _ in items)  # a worker produced it, not a gateway
    where = classify(turn, record_key, came_forwarded)
    if isinstance(where, Forward):
        return Record("misrouted", turn, turn.session_key, forward=where, turn_id=turn.turn_id, headers=items)
    kind: Kind = "forwarded" if isinstance(where, Forwarded) else "turn"
    return Record(kind, where, turn.session_key, turn_id=turn.turn_id, headers=items)
