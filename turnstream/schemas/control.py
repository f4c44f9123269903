"""Control records on the turns topic: an erasure request and the Table row that remembers it, and a pop.

`turnstream forget` produces `{"forget": {"session_key": K, "requested_at": T}}` keyed by K, so it lands on
the partition of K's turns and reaches the one worker that owns K's Table row, in order with its turns.
That worker replaces the row with a forget marker, `{"forgotten_at": T}`: while the marker lives, every
turn or summary of K (a replay, a late turn) is dropped.

A gateway that takes back a session's newest message produces `{"pop": {"session_id", "tenant", "control_id",
"seq", "position"}}` keyed by the session key: the worker removes the newest message of the session's tail if it
sits at conversation `position` (as the context document's `positions` name it). `control_id` and `seq` number
the pop among the session's turns, so a replayed pop is recognised as a replayed turn would be and changes
nothing; a pop whose message is not the newest in the tail any more goes to the dead-letter topic.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass

import orjson

from turnstream.schemas.ids import session_key
from turnstream.schemas.turn import SAFE_ID, SAFE_TENANT

_FORGET_PREFIX = b'{"forget":'
_MARKER_PREFIX = b'{"forgotten_at":'
_POP_PREFIX = b'{"pop":'


@dataclass(frozen=True, slots=True)
class ForgetRequest:
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


@dataclass(frozen=True, slots=True)
class PopRequest:
    """Take back a session's newest message, at conversation `position`; numbered like a turn."""

    session_id: str
    tenant: str | None
    control_id: str
    seq: int
    position: int

    @property
    def session_key(self) -> str:
        return session_key(self.session_id, self.tenant)


def pop_record(request: PopRequest) -> bytes:
    """The value of a pop request (its key is the session key)."""
    return orjson.dumps({"pop": asdict(request)})


def parse_pop(value: bytes) -> PopRequest | None:
    """The pop request in `value`, or None for anything else; a malformed one is left to the turn decoder."""
    if not value.startswith(_POP_PREFIX):
        return None
    try:
        body = orjson.loads(value)["pop"]
        request = PopRequest(body["session_id"], body["tenant"], body["control_id"], body["seq"], body["position"])
    except (orjson.JSONDecodeError, KeyError, TypeError):
        return None
    return request if _well_formed(request) else None


def _well_formed(request: PopRequest) -> bool:
    """The same limits as a turn's: the ids go into Kafka keys and Redis hash tags unescaped."""
    tenant_ok = request.tenant is None or (isinstance(request.tenant, str) and re.match(SAFE_TENANT, request.tenant))
    return bool(
        isinstance(request.session_id, str)
        and re.match(SAFE_ID, request.session_id)
        and tenant_ok
        and all(isinstance(name, str) and 0 < len(name) <= 128 for name in (request.session_id, request.control_id))
        and all(type(number) is int and number >= 0 for number in (request.seq, request.position))
    )
