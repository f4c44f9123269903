"""When a session's Table row leaves (pure): idle past its TTL, unless it is an erased session's forget marker,
which stays for its own lifetime so replayed or late turns of the session are still dropped."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

from turnstream.schemas.control import is_forget_marker

SWEEP_FRACTION = 10
"""Sweeps per TTL: a session leaves at most a tenth of its TTL late."""
SWEEP_BOUNDS_SECONDS = (0.5, 60.0)

Expiry = Literal["expire", "keep", "untrack"]
"""What a sweep does with an idle key: remove its row (a tombstone), leave it, or stop tracking a row gone."""


def sweep_interval(ttl_seconds: float) -> float:
    """Seconds between sweeps: a tenth of the TTL, at least 0.5 s, at most a minute."""
    low, high = SWEEP_BOUNDS_SECONDS
    return min(max(ttl_seconds / SWEEP_FRACTION, low), high)


def is_idle(touched_at: float, now: float, ttl_seconds: float) -> bool:
    """Whether a session last written at `touched_at` has been idle longer than its TTL."""
    return now - touched_at > ttl_seconds


def idle_sessions(touched: Mapping[str, float], now: float, ttl_seconds: float) -> list[str]:
    """The keys whose latest write is more than `ttl_seconds` before `now`."""
    return [key for key, at in touched.items() if is_idle(at, now, ttl_seconds)]


def expiry_of(row: bytes | None, touched_at: float, now: float, marker_seconds: float) -> Expiry:
    """What a sweep does with an idle session's row: a forget marker outlives the TTL by its own lifetime."""
    if row is None:
        return "untrack"
    if is_forget_marker(row) and now - touched_at <= marker_seconds:
        return "keep"
    return "expire"
