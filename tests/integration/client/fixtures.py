"""Context documents for the client tests."""

from __future__ import annotations

import time
from typing import Any

from turnstream.schemas.context import ContextDoc


def make_doc(version: int, session_id: str = "s1", tenant: str | None = "acme", **fields: Any) -> ContextDoc:
    base: dict[str, Any] = {
        "session_id": session_id,
        "tenant": tenant,
        "version": version,
        "last_turn_id": f"t{version}",
        "updated_at": time.time(),
        "messages": [{"role": "user", "content": f"message {version}"}],
        "tokens": {"before": 10, "after": 10, "budget": 100},
        "timings": {"compaction": 0.1},
    }
    return ContextDoc(**{**base, **fields})
