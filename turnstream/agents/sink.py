"""Sink: project a session's state into the context document gateways read from Redis."""

from __future__ import annotations

import time

from turnstream.agents.state import SessionState
from turnstream.schemas import ContextDoc


def context_doc(state: SessionState, timings: dict[str, float]) -> ContextDoc:
    """The versioned document of `state`; `timings` are the latest change's stages, in milliseconds."""
    result = state.compactor.result().to_dict()
    return ContextDoc(
        **result,
        session_id=state.session_id,
        tenant=state.tenant,
        version=state.version,
        last_turn_id=state.last_turn_id,
        updated_at=time.time(),
        timings=timings,
    )
