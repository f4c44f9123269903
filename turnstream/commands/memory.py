"""`turnstream memory list USER`: a user's long-term memories from Redis, as JSON."""

from __future__ import annotations

import argparse
import asyncio
import sys

import orjson
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from turnstream.cli import CliError
from turnstream.commands._services import configured_settings
from turnstream.memory import Memory, MemoryStore
from turnstream.schemas import session_key


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("memory", help="read long-term memories from Redis")
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    list_ = actions.add_parser(
        "list",
        help="print a user's memories as JSON",
        description="Print a user's memories as a JSON list, oldest first; exit 1 when there are none.",
    )
    list_.add_argument("user", help="user id (or, for memories of turns without a user, the session id)")
    list_.add_argument("--tenant", help="the user's tenant, if any")
    list_.set_defaults(run=run_list)


async def _list(owner: str) -> list[Memory]:
    store = MemoryStore.from_settings(configured_settings(redis=True))
    try:
        return await store.list(owner)
    finally:
        await store.aclose()


def run_list(args: argparse.Namespace) -> int:
    owner = session_key(args.user, args.tenant)  # the same join as owner_key's user branch
    try:
        memories = asyncio.run(_list(owner))
    except (RedisConnectionError, RedisTimeoutError) as error:
        raise CliError(f"cannot reach Redis: {error}") from None
    if not memories:
        raise CliError(f"no memories for {owner}")
    sys.stdout.write(orjson.dumps([m.model_dump() for m in memories], option=orjson.OPT_INDENT_2).decode() + "\n")
    return 0
