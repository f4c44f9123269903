"""`turnstream context get SESSION` / `context prompt SESSION TEXT`: a session's context, or a prompt built from it, as JSON."""

from __future__ import annotations

import argparse
import asyncio
import sys

import orjson

from turnstream.cli import CliError
from turnstream.client import ContextClient
from turnstream.commands._services import configured_settings
from turnstream.prompt.assemble import Prompt
from turnstream.redis.errors import REDIS_UNAVAILABLE
from turnstream.schemas.context import ContextDoc
from turnstream.schemas.ids import session_key


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser("context", help="read compacted contexts from Redis")
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    get = actions.add_parser(
        "get",
        help="print a session's context document as JSON",
        description="Print a session's context document as JSON; exit 1 when the session has none.",
    )
    get.add_argument("session", help="session id")
    get.add_argument("--tenant", help="the session's tenant, if it has one")
    get.add_argument("--user", help="the session's user id: one round trip instead of two")
    get.set_defaults(run=run_get)
    prompt = actions.add_parser(
        "prompt",
        help="print the prompt for a user message: context, profile, recalled memories and turns",
        description=(
            "Print {messages, recalled, archived, skipped_recall, timings} as JSON: `archived` lists the "
            "recalled turns with their BM25 scores (a turn around a hit has hit=false). This is a real "
            "request: the recalled memories count towards the session's dedup window."
        ),
    )
    prompt.add_argument("session", help="session id")
    prompt.add_argument("text", help="the user's new message")
    prompt.add_argument("--k", type=int, help="memories to recall (default TURNSTREAM_RECALL_K)")
    prompt.add_argument("--tenant", help="the session's tenant, if it has one")
    prompt.add_argument("--user", help="user id owning the memories (default: the session's owner, looked up)")
    prompt.set_defaults(run=run_prompt)


async def _get(session: str, tenant: str | None, user: str | None) -> ContextDoc | None:
    async with ContextClient.from_settings(configured_settings(redis=True)) as client:
        return await client.get(session, tenant=tenant, user_id=user)


def run_get(args: argparse.Namespace) -> int:
    try:
        doc = asyncio.run(_get(args.session, args.tenant, args.user))
    except REDIS_UNAVAILABLE as error:
        raise CliError(f"cannot reach Redis: {error}") from None
    if doc is None:
        raise CliError(f"no context for session {session_key(args.session, args.tenant)}")
    sys.stdout.write(doc.model_dump_json(indent=2) + "\n")
    return 0


async def _prompt(args: argparse.Namespace) -> Prompt:
    async with ContextClient.from_settings(configured_settings(redis=True)) as client:
        return await client.build_prompt(args.session, args.text, k=args.k, tenant=args.tenant, user_id=args.user)


def run_prompt(args: argparse.Namespace) -> int:
    if args.k is not None and args.k < 0:
        raise CliError("--k must be 0 or more", code=2)
    try:
        prompt = asyncio.run(_prompt(args))
    except REDIS_UNAVAILABLE as error:
        raise CliError(f"cannot reach Redis: {error}") from None
    sys.stdout.write(orjson.dumps(prompt.to_dict(), option=orjson.OPT_INDENT_2).decode() + "\n")
    return 0
