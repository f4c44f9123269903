"""Re-sync: a timer writes back, from the Table, every context Redis has lost (FLUSHALL, a restart without data).

Redis is a projection of the Table: the worker's state of each session is in its Table row. Each sweep
asks Redis, in pipelined EXISTS of a few hundred at a time, whether the owner pointer of each live session
of the worker's own partitions is still there (every context write sets it, with the context's TTL); for
each one missing, the session's context document is rebuilt from its row and written with the session's
recent turn ids. The write is the usual compare-and-set, so a sweep racing the session agent never
replaces a newer document.

Long-term memories, profiles and the recall archive are not in the Table: they come back from the memory
journal (agents/memory_resync.py).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable, Iterator
from itertools import islice

import faust

from turnstream.kafka.faust_private.table_rows import SessionsTable, recovered
from turnstream.kafka.timers import timer
from turnstream.metrics import contexts_resynced_total
from turnstream.redis.errors import REDIS_UNAVAILABLE
from turnstream.redis.writer import ContextWriter
from turnstream.schemas.control import is_forget_marker
from turnstream.session import CoreConfig, SessionCore, SessionState
from turnstream.session.expiry import is_idle
from turnstream.settings import Settings

log = logging.getLogger(__name__)

CHUNK = 500
"""Sessions per EXISTS round trip."""


def live_sessions(table: SessionsTable, held: set[int], now: float, settings: Settings) -> list[str]:
    """The sessions of partitions in `held` whose row was written within their TTL (older ones are expiring)."""
    return [
        key
        for key in table.held_keys(held)
        if not is_idle(table.touched.get(key, 0.0), now, settings.session_ttl_seconds)
    ]


def _chunks(keys: Iterable[str], size: int) -> Iterator[list[str]]:
    it = iter(keys)
    while chunk := list(islice(it, size)):
        yield chunk


async def resync(table: SessionsTable, keys: list[str], store: ContextWriter, core: SessionCore) -> int:
    """Write back the context of every session in `keys` whose owner pointer Redis has lost; how many were written."""
    written = 0
    for chunk in _chunks(keys, CHUNK):
        present = await store.pointed(chunk)
        states = [
            SessionState.restore(raw)
            for key, there in zip(chunk, present)
            if not there and (raw := table.data.get(key)) is not None and not is_forget_marker(raw)
        ]
        if not states:
            continue
        now = time.time()
        written += await store.write_many(
            [(core.encoded_context(state, now, {}), state.recent_turn_ids, state.owner) for state in states]
        )
    return written


def register_context_resync(app: faust.App, settings: Settings, table: SessionsTable) -> None:
    """Run the re-sync every TURNSTREAM_RESYNC_INTERVAL_SECONDS on every worker, for its own partitions."""
    if not settings.resync_interval_seconds:
        return
    core = SessionCore(CoreConfig.from_settings(settings))

    @timer(app, settings.resync_interval_seconds, name=f"{settings.topic_prefix}.context_resync")
    async def resync_lost_contexts() -> None:
        if app.rebalancing or not recovered(app):
            return
        held = {tp.partition for tp in app.consumer.assignment() if tp.topic == settings.turns_topic}
        store = ContextWriter.from_settings(settings)
        try:
            written = await resync(table, live_sessions(table, held, time.time(), settings), store, core)
        except REDIS_UNAVAILABLE as error:
            log.info("context re-sync skipped, Redis does not answer: %s", error)  # the next sweep tries again
            return
        finally:
            await store.aclose()
        if written:
            contexts_resynced_total.inc(written)
            log.warning("re-synced %d contexts Redis had lost, from the Table", written)
