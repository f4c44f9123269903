"""What both context clients read, without I/O: the session and owner a call names, and the replies decoded.

ContextClient (asyncio) and SyncContextClient (threads) send the same commands with the same keys
(schemas/keys.py); the decisions and decoding live here so the two cannot drift apart.
"""

from __future__ import annotations

from dataclasses import dataclass

from turnstream.memory.model import owner_key
from turnstream.schemas.context import ContextDoc
from turnstream.schemas.keys import session_key, session_owner


@dataclass(frozen=True, slots=True)
class WaitResult:
    """What wait_for found."""

    doc: ContextDoc | None
    """The latest context of the session (None when it has none yet)."""
    fresh: bool
    """True when `doc` includes the awaited turn; False when the wait timed out first."""


def session_and_owner(session_id: str, tenant: str | None, user_id: str | None) -> tuple[str, str | None]:
    """The session key, and the owner when the caller named the user (else it is looked up: a round trip more)."""
    key = session_key(session_id, tenant)
    return key, owner_key(user_id, tenant, session_id) if user_id else None


def owner_from(stored: bytes | str | None, session_key: str) -> str:
    """The owner pointer's value; a session the worker has not written yet is its own owner."""
    if stored is None:
        return session_owner(session_key)
    return stored.decode() if isinstance(stored, bytes) else stored


def doc_from(stored: bytes | str | None) -> ContextDoc | None:
    """The context hash's `doc` field as a ContextDoc; None when the session has no context."""
    return None if stored is None else ContextDoc.from_json(stored)
