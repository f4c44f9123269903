"""Re-sync: a timer writes back, from the Table, every context Redis has lost: all of them (FLUSHALL, a restart
without data), or the newest writes (a replica promoted after its primary died without passing them on).

Redis is a projection of the Table: the worker's state of each session is in its Table row. Each sweep
asks Redis, in pipelined EXISTS of a few hundred at a time, whether the owner pointer of each live session
of the worker's own partitions is still there (every context write sets it, with the context's TTL); for
each one missing, the session's context document is rebuilt from its row and written with the session's
recent turn ids. The write is the usual compare-and-set, so a sweep racing the session agent never
replaces a newer document.

A partial loss leaves the pointers in place, so each sweep also reads the primary's replication id
(redis/replication.py) and, per partition, the id under which the partition's contexts were last found
whole (`P:resync:contexts`). When they differ, the primary changed since: the sweep compares the version of
every live session's context in Redis with its Table row's and rewrites those behind, then marks the
partition with the current id. Each worker does it for the partitions it holds, so nothing is done twice.

Long-term memories, profiles and the recall archive are not in the Table: they come back from the memory
journal (agents/memory_resync.py).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from itertools import islice

import faust

from turnstream.kafka.faust_private.table_rows import SessionsTable, recovered
from turnstream.kafka.timers import timer
from turnstream.metrics import contexts_resynced_total, redis_failovers_detected_total
from turnstream.redis.errors import REDIS_UNAVAILABLE
from turnstream.redis.replication import Lineage, lineage, replication_id
from turnstream.redis.writer import ContextWriter
from turnstream.schemas.control import is_forget_marker
from turnstream.session import CoreConfig, SessionCore, SessionState
from turnstream.session.expiry import is_idle
from turnstream.session.row_format import SnapshotError, row_head
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


def _rows(table: SessionsTable, keys: Iterable[str]) -> dict[str, bytes]:
    """The Table rows of `keys` that hold a session (an erased session's forget marker holds none)."""
    return {key: raw for key in keys if (raw := table.data.get(key)) is not None and not is_forget_marker(raw)}


async def _write_back(store: ContextWriter, core: SessionCore, rows: Iterable[bytes]) -> int:
    """Rebuild each row's context document and write it, compare-and-set; how many were newer than Redis's."""
    states = [SessionState.restore(raw) for raw in rows]
    if not states:
        return 0
    now = time.time()
    return await store.write_many(
        [(core.encoded_context(state, now, {}), state.recent_turn_ids, state.owner) for state in states]
    )


async def resync(table: SessionsTable, keys: list[str], store: ContextWriter, core: SessionCore) -> int:
    """Write back the context of every session in `keys` whose owner pointer Redis has lost; how many were written."""
    written = 0
    for chunk in _chunks(keys, CHUNK):
        present = await store.pointed(chunk)
        rows = _rows(table, (key for key, there in zip(chunk, present) if not there))
        written += await _write_back(store, core, rows.values())
    return written


def behind(row_versions: Sequence[int], stored: Sequence[tuple[int, bool]]) -> list[bool]:
    """Per session, whether Redis misses some of what its Table row holds: a context older than the row's version
    (none counts as 0), or no owner pointer (written in the same pipeline, after the context)."""
    return [version > held or not pointed for version, (held, pointed) in zip(row_versions, stored)]


async def resync_behind(table: SessionsTable, keys: list[str], store: ContextWriter, core: SessionCore) -> int:
    """Write back the context of every session in `keys` whose Redis version is older than its Table row's (or whose
    owner pointer is gone); how many were written. Only those are rebuilt, so a sweep costs a version read per
    session and a rebuild per session behind."""
    written = 0
    for chunk in _chunks(keys, CHUNK):
        heads: dict[str, tuple[str, int]] = {}
        for key, raw in _rows(table, chunk).items():
            try:
                heads[key] = row_head(raw)
            except SnapshotError:  # restore() raises the same for this row wherever it is read: left to those reads
                continue
        stored = await store.stored_versions([(key, owner) for key, (owner, _) in heads.items()])
        stale = [key for key, late in zip(heads, behind([v for _, v in heads.values()], stored)) if late]
        written += await _write_back(store, core, (table.data[key] for key in stale))
    return written


@dataclass
class Sweep:
    """What one sweep of a worker's partitions found and wrote."""

    written: int = 0
    changed: dict[int, str] = field(default_factory=dict)
    """Partition -> the replication id its contexts were found whole under before the primary changed."""


def by_lineage(marks: dict[int, str | None], current: str | None) -> dict[Lineage, list[int]]:
    """The partitions of `marks` grouped by what their mark says against `current`."""
    groups: dict[Lineage, list[int]] = {}
    for partition, mark in sorted(marks.items()):
        groups.setdefault(lineage(mark, current), []).append(partition)
    return groups


async def sweep(
    table: SessionsTable, held: set[int], keys: list[str], store: ContextWriter, core: SessionCore
) -> Sweep:
    """Re-sync the live sessions `keys` of the partitions `held`: those whose partition was last found whole under
    another primary by version, the rest by owner pointer; then mark every held partition with the current id.

    The id is read before anything is compared, so a failover during the sweep leaves marks naming the old id and
    the next sweep compares again."""
    current = await replication_id(store.redis)
    marks = await store.verified(sorted(held))
    changed = set(by_lineage(marks, current).get(Lineage.CHANGED, []))
    done = Sweep(changed={p: str(marks[p]) for p in sorted(changed)})
    if changed:
        redis_failovers_detected_total.labels("contexts").inc()
        log.warning(
            "Redis's primary changed since the contexts of partitions %s were last found whole (replication id %s, "
            "now %s): acknowledged writes may be lost; comparing every context of them with the Table",
            sorted(changed),
            ", ".join(sorted(set(done.changed.values()))),
            current,
        )
    full = [key for key in keys if table.partition.get(key) in changed]
    rest = [key for key in keys if table.partition.get(key) not in changed]
    done.written = await resync_behind(table, full, store, core) + await resync(table, rest, store, core)
    if current is not None:
        await store.mark_verified(held, current)
    return done


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
            done = await sweep(table, held, live_sessions(table, held, time.time(), settings), store, core)
        except REDIS_UNAVAILABLE as error:
            log.info("context re-sync skipped, Redis does not answer: %s", error)  # the next sweep tries again
            return
        finally:
            await store.aclose()
        if done.written:
            contexts_resynced_total.inc(done.written)
            log.warning("re-synced %d contexts Redis had lost, from the Table", done.written)
