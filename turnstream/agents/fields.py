"""The fields that tie a worker's log line to the record it is about: session, turn, partition, offset, trace."""

from __future__ import annotations

from typing import Any, Protocol

import orjson

from turnstream.schemas.headers import Headers, trace_id


class Record(Protocol):
    """What a consumed Kafka record offers (Faust's Message, aiokafka's ConsumerRecord), read only."""

    @property
    def topic(self) -> str: ...
    @property
    def partition(self) -> int: ...
    @property
    def offset(self) -> int: ...
    @property
    def key(self) -> bytes | None: ...
    @property
    def value(self) -> bytes | None: ...
    @property
    def headers(self) -> Headers: ...


def sniffed_turn_id(value: bytes | None) -> str | None:
    """The `turn_id` of a raw turn, if its value is a JSON object with a string one (a refused turn often has)."""
    if not value:
        return None
    try:
        data = orjson.loads(value)
    except orjson.JSONDecodeError:
        return None
    turn = data.get("turn_id") if isinstance(data, dict) else None
    return turn if isinstance(turn, str) else None


def record_fields(record: Record, session: str | None = None, turn_id: str | None = None) -> dict[str, Any]:
    """`extra=` fields of a log line about `record`: the session (else the record's key), the turn id (else
    the one in the raw value), topic, partition, offset, and the trace id of its traceparent header."""
    turn_id = turn_id if turn_id is not None else sniffed_turn_id(record.value)
    return known_fields(record, session, turn_id, trace_id(record.headers))


def known_fields(record: Record, session: str | None, turn_id: str | None, trace: str | None) -> dict[str, Any]:
    """The same fields from what the caller has decoded already (agents/envelope.py): no second look at the record."""
    if session is None and record.key is not None:
        session = record.key.decode("utf-8", "replace")
    return {
        "session": session,
        "turn_id": turn_id,
        "topic": record.topic,
        "partition": record.partition,
        "offset": record.offset,
        "trace_id": trace,
    }
