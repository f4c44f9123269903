"""The rules that decide what an item meets before the core steps it, pure: where a decoded turn goes, what a
session's stored row stands for, and what an item does to a session that was erased or that has no state."""

from __future__ import annotations

from typing import Literal, NamedTuple

from turnstream.schemas.control import PopRequest, is_forget_marker
from turnstream.schemas.ids import Forward, route
from turnstream.schemas.summaries import SummaryResult
from turnstream.schemas.turn import Turn
from turnstream.session.core import Input, SessionCore
from turnstream.session.reorder import Forwarded
from turnstream.session.state import SessionState


class Erased:
    """A session erased by `turnstream forget`: its row is a forget marker, or a forget came in this batch."""

    def __repr__(self) -> str:
        return "ERASED"


ERASED = Erased()
Loaded = SessionState | Erased | None
"""What a state loader finds for a session: its state, its erasure, or nothing (never written, or expired)."""


class Skip(NamedTuple):
    """An item its session does not step: why, and the dead letter it becomes, if any."""

    reason: Literal["forgotten", "no_state"]
    dead_letter: tuple[str, str] | None = None


def classify(turn: Turn, record_key: bytes | None, came_forwarded: bool) -> Turn | Forwarded | Forward:
    """Where a decoded turn goes: forwarded under its session key when keyed otherwise (agents/ingest.py);
    else applied here, as Forwarded when a worker forwarded it (it may have overtaken the turns before it)."""
    if (where := route(record_key, turn.session_key)) is not None:
        return where
    return Forwarded(turn) if came_forwarded else turn


def loaded_from_row(row: bytes | None) -> Loaded:
    """What a Table row stands for; SnapshotError for a row this version cannot read."""
    if row is None:
        return None
    if is_forget_marker(row):
        return ERASED
    return SessionState.restore(row)


def opening(key: str, item: Input, loaded: Loaded, core: SessionCore) -> SessionState | Skip:
    """The state the first item of a batch for session `key` is stepped on, or why it is not stepped.

    Erased: a replay or a late turn must not bring the session back. No state: a summary is dropped, a pop
    dead-lettered (nothing to take back); only a turn starts a session.
    """
    if isinstance(loaded, Erased):
        return Skip("forgotten", _nothing_to_pop(key, item))
    if loaded is not None:
        return loaded
    if isinstance(item, (SummaryResult, PopRequest)):
        return Skip("no_state", _nothing_to_pop(key, item))
    return core.new_state(item)


def _nothing_to_pop(key: str, item: Input) -> tuple[str, str] | None:
    return (
        ("pop", f"session {key} has no state here (never written, or erased)") if isinstance(item, PopRequest) else None
    )
