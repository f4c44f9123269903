"""Control records on the turns topic: an erasure request, and the Table row that remembers it.

`turnstream forget` produces `{"forget": {"session_key": K, "requested_at": T}}` keyed by K, so it lands on
the partition of K's turns and reaches the one worker that owns K's Table row, in order with its turns.
That worker replaces the row with a forget marker, `{"forgotten_at": T}`: while the marker lives, every
turn or summary of K (a replay, a late turn) is dropped.
"""

from __future__ import annotations

from typing import NamedTuple

import orjson

_FORGET_PREFIX = b'{"forget":'
_MARKER_PREFIX = b'{"forgotten_at":'


class ForgetRequest(NamedTuple):
    session_key: str
    requested_at: float


def forget_record(session_key: str, requested_at: float) -> bytes:
    """The value of the erasure request for one session."""
    return orjson.dumps({"forget": {"session_key": session_key, "requested_at": requested_at}})


def parse_forget(value: bytes) -> ForgetRequest | None:
    """The erasure request in `value`, or None for anything else (a turn: no JSON parse spent on it)."""
    if not value.startswith(_FORGET_PREFIX):
        return None
    try:
        body = orjson.loads(value)["forget"]
        return ForgetRequest(str(body["session_key"]), float(body["requested_at"]))
    except (orjson.JSONDecodeError, KeyError, TypeError, ValueError):
        return None  # not ours after all: decoded as a turn, it goes to the dead-letter topic


def forget_marker(forgotten_at: float) -> bytes:
    """The Table row of an erased session."""
    return orjson.dumps({"forgotten_at": forgotten_at})


def is_forget_marker(row: bytes | None) -> bool:
    return row is not None and row.startswith(_MARKER_PREFIX)
