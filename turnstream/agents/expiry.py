"""Session expiry: a timer removes the Table rows (and live states) of sessions idle past TURNSTREAM_SESSION_TTL_SECONDS.

Redis already lets their context, applied-turn ids and owner pointer expire after the same idle time
(every write sets it); without this sweep the Table, and every restart's recovery, would keep every
session that ever lived. A removed row becomes a tombstone in the changelog, so compaction drops it and
a recovering worker never sees it. A later turn of the session starts it afresh.

After a sweep that removed sessions, glibc's `malloc_trim` hands the freed heap back to the system: without
it the allocator keeps the pages of expired rows, and a worker's resident memory follows its busiest hour,
not its live sessions (`turnstream bench`'s churn figure, 9 in tools/turnstream_tools/benchmarks/README.md; its current value in
docs/performance.md). It takes a few milliseconds; on a libc without it nothing is done.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import logging
import time
from collections.abc import Callable

import faust

from turnstream.kafka.faust_private.table_rows import SessionsTable, recovered
from turnstream.kafka.timers import timer
from turnstream.metrics import sessions_expired_total
from turnstream.session import LiveStates
from turnstream.session.expiry import expiry_of, idle_sessions, sweep_interval
from turnstream.settings import Settings

log = logging.getLogger(__name__)


def heap_trimmer(
    find_libc: Callable[[], str | None] = lambda: ctypes.util.find_library("c"),
) -> Callable[[], int] | None:
    """A call that returns freed heap pages to the system (glibc's `malloc_trim(0)`); None where there is none.
    The C library is looked for here, when the worker registers its sweep, not when this module is imported."""
    libc_name = find_libc()
    if libc_name is None:
        return None
    try:
        trim = ctypes.CDLL(libc_name).malloc_trim
    except (OSError, AttributeError):
        return None
    trim.argtypes, trim.restype = [ctypes.c_size_t], ctypes.c_int
    return functools.partial(trim, 0)


def sweep(table: SessionsTable, held: set[int], now: float, settings: Settings, live: LiveStates) -> int:
    """Expire the idle sessions of the partitions in `held`, rows and live states; the number expired.

    Rows of other partitions are left alone (another worker owns them now); rows no longer in the Table
    are forgotten. A forget marker stays for TURNSTREAM_FORGET_MARKER_SECONDS instead.
    """
    expired = 0
    for key in idle_sessions(table.touched, now, settings.session_ttl_seconds):
        action = expiry_of(table.data.get(key), table.touched[key], now, settings.forget_marker_seconds)
        if action == "untrack":
            table.untrack(key)
        elif action == "expire" and (partition := table.partition.get(key)) in held:
            table.expire(key, partition)
            live.forget(key)
            expired += 1
    return expired


def register_session_expiry(app: faust.App, settings: Settings, table: SessionsTable, live: LiveStates) -> None:
    """Run the sweep on every worker, for its own partitions, while no rebalance or recovery is under way."""
    trim_heap = heap_trimmer()

    @timer(app, sweep_interval(settings.session_ttl_seconds), name=f"{settings.topic_prefix}.session_expiry")
    async def expire_idle_sessions() -> None:
        if app.rebalancing or not recovered(app):
            return
        held = {tp.partition for tp in app.consumer.assignment() if tp.topic == settings.turns_topic}
        expired = sweep(table, held, time.time(), settings, live)
        if expired:
            if trim_heap is not None:
                trim_heap()
            sessions_expired_total.inc(expired)
            log.info("expired %d idle sessions from the Table", expired)
