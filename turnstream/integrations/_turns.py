"""Turns from a framework's new chat messages: ids and seqs that continue a session's context; the error of a
write to an erased session. Pure, no I/O."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import orjson

from turnstream.client.errors import ClientError
from turnstream.schemas.context import ContextDoc
from turnstream.schemas.turn import Turn, validate_turn
from turnstream.text.chat import Message


def next_seq(doc: ContextDoc | None) -> int:
    """The seq of the session's next turn: its context's version, 0 for a new session.

    The worker adds at least one to the version per applied turn, so numbering every turn this way keeps each
    seq above the last applied one (a seq at or below it would be dropped as a replay).
    """
    return 0 if doc is None else doc.version


def turn_id(seq: int, message: Message) -> str:
    """`seq` and a digest of the message: the same call gives the same id, and two writers racing for one seq get
    different ids, so the one the worker drops as a replay times out in record instead of passing for applied."""
    digest = hashlib.blake2b(orjson.dumps(message, option=orjson.OPT_SORT_KEYS), digest_size=8).hexdigest()
    return f"{seq}-{digest}"


def session_turns(
    session_id: str,
    messages: Sequence[Message],
    first_seq: int,
    *,
    tenant: str | None = None,
    user_id: str | None = None,
    ts: float | None = None,
) -> list[Turn]:
    """`messages` as the session's turns numbered from `first_seq` (TurnError for a message of the wrong shape)."""
    return [
        validate_turn(
            {
                "turn_id": turn_id(seq, message),
                "session_id": session_id,
                "tenant": tenant,
                "user_id": user_id,
                "seq": seq,
                "ts": ts,
                "message": message,
            }
        )
        for seq, message in enumerate(messages, first_seq)
    ]


class SessionErased(ClientError):
    """A write to an erased session: the worker drops every turn of it while its forget marker lives."""

    def __init__(self, session_key: str) -> None:
        super().__init__(f"session {session_key!r} was erased: its turns are dropped, use a new session id")
        self.session_key = session_key
