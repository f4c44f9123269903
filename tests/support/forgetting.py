"""`turnstream forget` for tests: a tenant's conversations of numbered user statements, and the command itself."""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Any

from turnstream.settings import Settings
from turnstream.stack.processes import settings_env

TENANT = "acme"
OBJECTS = ["locker", "gate", "seat", "room", "badge", "desk"]


def conversation(session_id: str, user_id: str | None, seed: int) -> list[dict[str, Any]]:
    """User statements ("My locker 3 number is 21") and short answers: memories, archive, profile."""
    turns = []
    for n in range(6):
        role = "user" if n % 2 == 0 else "assistant"
        content = (
            f"My {OBJECTS[(seed + n) % len(OBJECTS)]} {seed + n} number is {(seed + n) * 7}"
            if role == "user"
            else "Noted."
        )
        turns.append(
            {
                "turn_id": f"{session_id}-{n}",
                "session_id": session_id,
                "tenant": TENANT,
                "user_id": user_id,
                "seq": n,
                "message": {"role": role, "content": content},
            }
        )
    return turns


def forget(settings: Settings, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, **settings_env(settings)}
    return subprocess.run(
        [sys.executable, "-m", "turnstream", "forget", *args], capture_output=True, text=True, env=env, timeout=120
    )
