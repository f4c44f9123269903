"""Deterministic conversations to push through the pipeline: ReAct-style ones, and users stating trip details."""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

CITIES = ["Lisbon", "Tokyo", "Oslo", "Lima", "Cairo", "Seoul", "Quito", "Perth"]


def react_messages(seed: int, count: int) -> list[dict[str, Any]]:
    """`count` messages: system, task, then thoughts, single and parallel tool calls, results, answers."""
    rng = random.Random(seed)
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "You are a travel planning agent."},
        {"role": "user", "content": f"Plan a trip to {rng.choice(CITIES)} for {rng.randint(2, 9)} days."},
    ]
    step = 0
    while len(messages) < count:
        messages.extend(_step(rng, step))
        step += 1
    # cutting mid-step is fine: a trailing call still waiting for its results is a valid conversation
    return messages[:count]


def _step(rng: random.Random, step: int) -> Iterator[dict[str, Any]]:
    if rng.random() < 0.15:
        yield {"role": "user", "content": f"Also keep the budget under {rng.randint(5, 50) * 100} EUR."}
    yield {"role": "assistant", "content": f"Thought {step}: I should look up more options."}
    calls = [
        {
            "id": f"call_{step}_{n}",
            "type": "function",
            "function": {
                "name": rng.choice(["search_flights", "search_hotels", "weather"]),
                "arguments": f'{{"q": "{rng.choice(CITIES)}"}}',
            },
        }
        for n in range(rng.choice([1, 1, 2, 3]))
    ]
    yield {"role": "assistant", "content": None, "tool_calls": calls}
    for call in calls:
        yield {
            "role": "tool",
            "tool_call_id": call["id"],
            "content": "result " + " ".join(rng.choice(CITIES) for _ in range(rng.randint(5, 60))),
        }
    yield {"role": "assistant", "content": f"Step {step} done; {rng.randint(1, 9)} options found."}


def turns_for(session_id: str, seed: int, count: int, tenant: str | None = None) -> list[dict[str, Any]]:
    """The Turn values (as dicts) of one session."""
    return [
        {
            "turn_id": f"{session_id}-{seq}",
            "session_id": session_id,
            "tenant": tenant,
            "user_id": f"user-{seed}",
            "seq": seq,
            "ts": 1_700_000_000 + seq,
            "message": message,
            "meta": {},
        }
        for seq, message in enumerate(react_messages(seed, count))
    ]


def lines(user: int) -> list[str]:
    return [
        f"Hi! I'm planning a trip to Lisbon in May, user {user} here.",
        f"My budget is {1000 + user * 100} EUR for the whole trip.",
        f"My locker number is {700 + user}.",
    ]


def turns(session_id: str, user_id: str, texts: list[str], first_seq: int = 0) -> list[dict[str, Any]]:
    messages = [
        m for text in texts for m in ({"role": "user", "content": text}, {"role": "assistant", "content": "Noted."})
    ]
    return [
        {
            "turn_id": f"{session_id}-{first_seq + n}",
            "session_id": session_id,
            "user_id": user_id,
            "seq": first_seq + n,
            "message": message,
        }
        for n, message in enumerate(messages)
    ]
