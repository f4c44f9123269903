"""Sink: project a session's state into the context document gateways read from Redis."""

from __future__ import annotations

import time

from turnstream.agents.state import SessionState
from turnstream.schemas import ContextDoc, Turn


def context_doc(state: SessionState, turn: Turn, timings: dict[str, float]) -> ContextDoc:
    """The versioned document for `state` after `turn`; `timings` are the stages' milliseconds."""
    result = state.compactor.result().to_dict()
    return ContextDoc(
        **result,
        session_id=turn.session_id,
        tenant=turn.tenant,
        version=state.version,
        last_turn_id=state.last_turn_id,
        updated_at=time.time(),
        timings=timings,
    )
