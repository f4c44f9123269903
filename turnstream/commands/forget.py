"""`turnstream forget --user U | --session S [--tenant T]`: erase a user or a session, Table rows included."""

from __future__ import annotations

import argparse
import asyncio
import time
from collections import Counter

from aiokafka.errors import KafkaError
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from turnstream.cli import CliError
from turnstream.client import TurnProducer
from turnstream.commands._services import client_logging, configured_settings
from turnstream.connections import redis_client
from turnstream.memory.erase import Eraser
from turnstream.memory.journal import erasure_record, journal_key
from turnstream.schemas.keys import session_key, user_owner
from turnstream.schemas.control import forget_record
from turnstream.settings import Settings
from turnstream.streams.journal import append_records

CONFIRM_TIMEOUT_SECONDS = 60.0


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "forget",
        help="erase a user or a session: contexts, memories, profile, archive, recall lists and Table rows",
        description=(
            "Send a forget record for each session concerned to the turns topic and wait until the workers that own "
            "them have replaced their Table rows with forget markers (a replayed or late turn of such a session is "
            "dropped for TURNSTREAM_FORGET_MARKER_SECONDS); then delete the Redis keys, tombstone what went in the "
            "memory journal (so a re-sync after Redis loses its data does not bring it back), and print what went, per kind. "
            "--user removes everything of the user, profile included; --session removes the session's context, "
            "recall list, archived turns and the memories last taken from it (the user's profile stays)."
        ),
    )
    who = parser.add_mutually_exclusive_group(required=True)
    who.add_argument("--user", help="user id: every session and all long-term data of the user")
    who.add_argument("--session", help="session id: one session")
    parser.add_argument("--tenant", help="the user's or session's tenant, if any")
    parser.add_argument("--dry-run", action="store_true", help="print what would be removed, change nothing")
    parser.set_defaults(run=run)


async def _forget(settings: Settings, user: str | None, session: str | None, tenant: str | None, dry_run: bool) -> tuple[str, Counter[str]]:
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
    markers = [eraser.layout.forgotten(key) for key in sessions]
    deadline = time.monotonic() + CONFIRM_TIMEOUT_SECONDS
    while True:
        async with eraser.redis.pipeline(transaction=False) as pipe:
            for marker in markers:  # GETs, not one MGET: on a Redis Cluster the markers sit in different slots
                pipe.get(marker)
            values = await pipe.execute()
        waiting = [key for key, value in zip(sessions, values) if value is None or float(value) < requested_at]
        if not waiting:
            return
        if time.monotonic() > deadline:
            raise CliError(f"no worker confirmed the erasure of {len(waiting)} session(s) (e.g. {waiting[0]}) within "
                           f"{CONFIRM_TIMEOUT_SECONDS:.0f}s: is a worker running? Nothing was deleted from Redis")
        await asyncio.sleep(0.2)


async def _erase_journal(settings: Settings, owner: str, session: str | None, memories: list[str], entries: list[str]) -> None:
    """Tombstones in the memory journal for what was erased, and the erasure itself: a replay of the journal
    leaves out whatever of the owner (or session) was written before now, tombstoned or not."""
    records = [(owner, journal_key("m", owner, id_), None) for id_ in memories]
    records += [(owner, journal_key("a", owner, id_), None) for id_ in entries]
    records.append((owner, *erasure_record(owner, session, time.time())))
    await append_records(settings, records)


def run(args: argparse.Namespace) -> int:
    client_logging()
    settings = configured_settings(kafka=not args.dry_run, redis=True)
    if args.user == "" or args.session == "":
        raise CliError("--user and --session need a non-empty id", code=2)
    try:
        what, counts = asyncio.run(_forget(settings, args.user, args.session, args.tenant, args.dry_run))
    except (RedisConnectionError, RedisTimeoutError) as error:
        raise CliError(f"cannot reach Redis: {error}") from None
    except KafkaError as error:
        raise CliError(f"cannot reach the broker: {type(error).__name__}: {error}") from None
    verb = "would remove" if args.dry_run else "removed"
    print(f"{what}: {verb}")
    for kind, count in sorted(counts.items()):
        print(f"  {kind}: {count}")
    return 0
