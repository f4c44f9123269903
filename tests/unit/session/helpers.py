"""Turns, cores and states for the session core's unit tests."""

from __future__ import annotations

from typing import Any

from turnstream.schemas.turn import Turn
from turnstream.session import CoreConfig, SessionCore, SessionState
from turnstream.settings import Settings

NOW = 1_700_000_000.0


def turn(
    n: int, message: dict[str, Any], session: str = "s1", user: str | None = "maya", turn_id: str | None = None
) -> Turn:
    return Turn(
        turn_id=turn_id or f"{session}-{n}", session_id=session, user_id=user, seq=n, ts=NOW + n, message=message
    )


def core(**overrides: Any) -> SessionCore:
    return SessionCore(CoreConfig.from_settings(Settings(budget_tokens=300, **overrides)))


def fresh(core_: SessionCore, first: Turn) -> SessionState:
    return core_.new_state(first)


def doc_body(core_: SessionCore, state: SessionState) -> dict[str, Any]:
    return core_.context_doc(state, 0.0, {}).model_dump()
