"""`turnstream context get SESSION`: a session's compacted context from Redis, as JSON."""

from __future__ import annotations

import argparse
import asyncio
import sys

from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from turnstream.cli import CliError
from turnstream.client import ContextClient
from turnstream.commands._services import configured_settings
from turnstream.schemas import ContextDoc, session_key


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("context", help="read compacted contexts from Redis")
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    get = actions.add_parser(
        "get",
        help="print a session's context document as JSON",
        description="Print a session's context document as JSON; exit 1 when the session has none.",
    )
    get.add_argument("session", help="session id")
    get.add_argument("--tenant", help="the session's tenant, if it has one")
    get.set_defaults(run=run_get)


async def _get(session: str, tenant: str | None) -> ContextDoc | None:
    async with ContextClient.from_settings(configured_settings(redis=True)) as client:
        return await client.get(session, tenant=tenant)


def run_get(args: argparse.Namespace) -> int:
    try:
        doc = asyncio.run(_get(args.session, args.tenant))
    except (RedisConnectionError, RedisTimeoutError) as error:
        raise CliError(f"cannot reach Redis: {error}") from None
    if doc is None:
        raise CliError(f"no context for session {session_key(args.session, args.tenant)}")
    sys.stdout.write(doc.model_dump_json(indent=2) + "\n")
    return 0
