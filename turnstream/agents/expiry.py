"""Session expiry: a timer removes the Table rows (and live states) of sessions idle past TURNSTREAM_SESSION_TTL_SECONDS.

Redis already lets their context, applied-turn ids and owner pointer expire after the same idle time
(every write sets it); without this sweep the Table, and every restart's recovery, would keep every
session that ever lived. A removed row becomes a tombstone in the changelog, so compaction drops it and
a recovering worker never sees it. A later turn of the session starts it afresh.
"""

from __future__ import annotations

import logging
import time
from typing import Mapping

import faust

from turnstream.schemas.control import is_forget_marker
from turnstream.session import LiveStates
from turnstream.settings import Settings
from turnstream.streams.metrics import sessions_expired_total
from turnstream.streams.tables import SessionsTable

log = logging.getLogger(__name__)

SWEEP_FRACTION = 10
"""Sweeps per TTL: a session leaves at most a tenth of its TTL late."""
SWEEP_BOUNDS_SECONDS = (0.5, 60.0)


def sweep_interval(ttl_seconds: float) -> float:
    """Seconds between sweeps: a tenth of the TTL, at least 0.5 s, at most a minute."""
    low, high = SWEEP_BOUNDS_SECONDS
    return min(max(ttl_seconds / SWEEP_FRACTION, low), high)


def idle_sessions(touched: Mapping[str, float], now: float, ttl_seconds: float) -> list[str]:
    """The keys whose latest write is more than `ttl_seconds` before `now`."""
    return [key for key, at in touched.items() if now - at > ttl_seconds]


def sweep(table: SessionsTable, held: set[int], now: float, settings: Settings, live: LiveStates) -> int:
    """Expire the idle sessions of the partitions in `held`, rows and live states; the number expired.

    Rows of other partitions are left alone (another worker owns them now); rows no longer in the Table
    are forgotten. A forget marker stays for TURNSTREAM_FORGET_MARKER_SECONDS instead.
    """
    expired = 0
    for key in idle_sessions(table.touched, now, settings.session_ttl_seconds):
        if key not in table.data:
            table.untrack(key)
            continue
        if is_forget_marker(table.data[key]) and now - table.touched[key] <= settings.forget_marker_seconds:
            continue  # an erased session's marker keeps dropping its replayed turns for its own lifetime
        partition = table.partition.get(key)
        if partition in held:
            table.expire(key, partition)
            live.forget(key)
            expired += 1
    return expired


def register_session_expiry(app: faust.App, settings: Settings, table: SessionsTable, live: LiveStates) -> None:
    """Run the sweep on every worker, for its own partitions, while no rebalance or recovery is under way."""

    @app.timer(sweep_interval(settings.session_ttl_seconds), name=f"{settings.topic_prefix}.session_expiry")
    async def expire_idle_sessions() -> None:
        if app.rebalancing or not app.tables.recovery.completed.is_set():
            return
        held = {tp.partition for tp in app.consumer.assignment() if tp.topic == settings.turns_topic}
        expired = sweep(table, held, time.time(), settings, live)
        if expired:
            sessions_expired_total.inc(expired)
            log.info("expired %d idle sessions from the Table", expired)
