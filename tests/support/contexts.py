"""A stored context for integration tests: a session has one once its first turn is applied, and only then does a
prompt record anything for it (its recall list, its memories' access counts)."""

from __future__ import annotations

import time

from redis.asyncio import Redis

from turnstream.compaction.marker import marker_message
from turnstream.redis.writer import ContextWriter
from turnstream.schemas.context import ContextDoc
from turnstream.settings import Settings
from turnstream.text.tokens import count_messages


def compacted_doc(session_id: str, tail_turns: int) -> ContextDoc:
    """A compacted context of tenant acme: anchors, marker, summary, `tail_turns` question-and-answer pairs."""
    tail = []
    for n in range(tail_turns):
        tail += [
            {"role": "user", "content": f"Question {n} about hotels in Lisbon?"},
            {"role": "assistant", "content": f"Answer {n}: " + "details " * 30},
        ]
    messages = [
        {"role": "system", "content": "You are a travel agent."},
        {"role": "user", "content": "Plan a trip to Lisbon."},
        marker_message("en"),
        {"role": "system", "content": "[Summary of the compressed history]\nThe user plans Lisbon in May."},
        *tail,
    ]
    return ContextDoc(
        session_id=session_id,
        tenant="acme",
        version=1,
        last_turn_id="t1",
        updated_at=time.time(),
        messages=messages,
        marker_index=2,
        dropped=6,
        summary="The user plans Lisbon in May.",
        tokens={"before": 9000, "after": count_messages(messages), "budget": 4000},
    )


async def with_context(redis: Redis, settings: Settings, session_id: str, owner: str) -> None:
    """Give session `session_id` (of tenant acme, owned by `owner`) a context, as after its first turn."""
    await ContextWriter.on(redis, settings).write(compacted_doc(session_id, tail_turns=1), ["t1"], owner=owner)
