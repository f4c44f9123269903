"""Order after a detour: turns keyed by anything but their session key reach its partition forwarded by a
worker, from whatever partition they landed on, so they can arrive in another order than they were sent.

A turn that took the detour (or any turn while others wait) and whose `seq` leaves a gap after the last
applied one waits in the session's state. Once the gap is filled, the waiting turns are sent round again,
in `seq` order, and apply as they come back. A session's first turn is expected at seq 0. Turns without
`seq` carry no order to restore: they apply as they arrive. Pure rules over a SessionState; no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple

from turnstream.schemas.turn import Turn

if TYPE_CHECKING:
    from turnstream.session.state import SessionState

MAX_HELD = 64
"""Turns one session may hold: more, and they are released with their gap unfilled."""
MAX_WAIT_SECONDS = 30.0
"""How long a held turn waits for its gap (checked when its session's next turn arrives)."""


@dataclass(frozen=True, slots=True)
class HeldTurn:
    """A turn waiting in its session's state for the turns before it."""

    seq: int
    turn: Turn
    since: float
    """When it began to wait, epoch seconds."""


class Forwarded(NamedTuple):
    """A turn that reached its session's partition forwarded by a worker: it was keyed otherwise."""

    turn: Turn

    @property
    def session_key(self) -> str:
        return self.turn.session_key


def _expected(state: SessionState) -> int:
    return 0 if state.last_seq is None else state.last_seq + 1


def is_held(state: SessionState, turn: Turn) -> bool:
    """Already waiting (a second copy of a forwarded turn)."""
    return turn.seq is not None and any(held.seq == turn.seq for held in state.held)


def must_wait(state: SessionState, turn: Turn, forwarded: bool) -> bool:
    """The turn is ahead of a gap and may have overtaken the turns before it: it took the detour, or
    turns that did are waiting. A turn its session released its gap for does not wait again."""
    if turn.seq is None or not (forwarded or state.held):
        return False
    if state.released_through is not None and turn.seq <= state.released_through:
        return False
    return turn.seq > _expected(state)


def hold(state: SessionState, turn: Turn, now: float) -> None:
    if turn.seq is None:
        raise ValueError("only a numbered turn can wait for its gap")
    state.held.append(HeldTurn(turn.seq, turn, now))


def due(state: SessionState, now: float) -> list[Turn]:
    """The held turns to send round again, in seq order, removed from `state`: all of them once the first
    one's gap is filled, or, gap or not, once MAX_HELD wait or the oldest waited MAX_WAIT_SECONDS."""
    if not state.held:
        return []
    first = min(held.seq for held in state.held)
    forced = len(state.held) >= MAX_HELD or now - min(held.since for held in state.held) >= MAX_WAIT_SECONDS
    if first > _expected(state) and not forced:
        return []
    if forced:
        state.released_through = max(held.seq for held in state.held)
    released = [held.turn for held in sorted(state.held, key=lambda held: (held.seq, held.since))]
    state.held = []
    return released
