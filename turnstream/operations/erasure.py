"""Erasure of a user or a session: Table rows (through the workers, confirmed), Redis, and the memory journal.

`turnstream forget` and the agent-framework adapters' clear methods call `erase`; a worker must be running to
drop the Table rows, and nothing is deleted from Redis before every row's worker has confirmed.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter

from turnstream.client import TurnProducer
from turnstream.errors import TurnstreamError
from turnstream.kafka.journal_topic import append_records
from turnstream.redis.connect import redis_client
from turnstream.redis.erase import Eraser
from turnstream.schemas.control import forget_record
from turnstream.schemas.ids import session_key, user_owner
from turnstream.schemas.journal import Kind, erasure_record, journal_key
from turnstream.settings import Settings

CONFIRM_TIMEOUT_SECONDS = 60.0


class ErasureNotConfirmed(TurnstreamError, RuntimeError):
    """No worker confirmed that it dropped a session's Table row in time; nothing was deleted from Redis."""


async def erase(
    settings: Settings,
    *,
    user: str | None = None,
    session: str | None = None,
    tenant: str | None = None,
    dry_run: bool = False,
) -> tuple[str, Counter[str]]:
    """Erase `user` (every session of theirs) or one `session`; what was erased and how much of each kind.

    Raises ErasureNotConfirmed when no worker confirms the Table rows within CONFIRM_TIMEOUT_SECONDS."""
    redis = redis_client(settings)
    eraser = Eraser(redis, settings)
    try:
        if user is not None:
            owner = user_owner(user, tenant)
            sessions = await eraser.sessions_of(owner)
            what = f"user {owner}"
        else:
            key = session_key(session or "", tenant)
            owner, sessions, what = await eraser.owner_of(key), {key}, f"session {key}"
        erased_session = None if user is not None else key
        if not dry_run:
            await _drop_rows(settings, eraser, sorted(sessions))
            journaled = await eraser.journal_ids(owner, erased_session)
        if user is not None:
            counts = await eraser.erase_owner(owner, sessions, dry_run)
        else:
            counts = await eraser.erase_session(owner, key, dry_run)
        if not dry_run:
            await _erase_journal(settings, owner, erased_session, *journaled)
        counts["sessions (Table rows)"] = len(sessions)
        return what, counts
    finally:
        await redis.aclose()


async def _drop_rows(settings: Settings, eraser: Eraser, sessions: list[str]) -> None:
    """Forget records for `sessions`, then wait for each worker's confirmation (its marker in Redis)."""
    if not sessions:
        return
    requested_at = time.time()
    async with TurnProducer(settings) as producer:
        for key in sessions:
            await producer.send_raw(key.encode(), forget_record(key, requested_at))
        await producer.flush()
    deadline = time.monotonic() + CONFIRM_TIMEOUT_SECONDS
    while True:
        waiting = await eraser.unconfirmed(sessions, requested_at)
        if not waiting:
            return
        if time.monotonic() > deadline:
            raise ErasureNotConfirmed(
                f"no worker confirmed the erasure of {len(waiting)} session(s) (e.g. {waiting[0]}) within "
                f"{CONFIRM_TIMEOUT_SECONDS:.0f}s: is a worker running? Nothing was deleted from Redis"
            )
        await asyncio.sleep(0.2)


async def _erase_journal(
    settings: Settings, owner: str, session: str | None, memories: list[str], entries: list[str]
) -> None:
    """Tombstones in the memory journal for what was erased, and the erasure itself: a replay of the journal
    leaves out whatever of the owner (or session) was written before now, tombstoned or not."""
    stored: tuple[Kind, ...] = ("a", "v")  # an archived turn's entry and its vector
    records: list[tuple[str, bytes, bytes | None]] = [(owner, journal_key("m", owner, id_), None) for id_ in memories]
    records += [(owner, journal_key(kind, owner, id_), None) for id_ in entries for kind in stored]
    records.append((owner, *erasure_record(owner, session, time.time())))
    await append_records(settings, records)
