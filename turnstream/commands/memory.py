"""`turnstream memory list USER` / `memory search USER TEXT`: a user's long-term memories, and what recall finds.

`--session S` instead of USER reads the memories of a session without a user: they have an owner of
their own (schemas/ids.py), so no user id, whatever it is, reaches them.
"""

from __future__ import annotations

import argparse
import asyncio
import sys

import orjson

from turnstream.cli import CliError
from turnstream.client.context import GatewayMemory
from turnstream.commands._services import configured_settings
from turnstream.prompt.assemble import Prompt
from turnstream.redis.errors import REDIS_UNAVAILABLE
from turnstream.redis.memory_store import MemoryStore
from turnstream.schemas.ids import session_key, session_owner, user_owner
from turnstream.schemas.memory import Memory


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser("memory", help="read long-term memories from Redis")
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    list_ = actions.add_parser(
        "list",
        help="print a user's memories as JSON",
        description="Print a user's memories as a JSON list, oldest first; exit 1 when there are none.",
    )
    _add_owner_arguments(list_)
    list_.set_defaults(run=run_list)
    search = actions.add_parser(
        "search",
        help="print what recall would return for a text, without recording it",
        description=(
            "Print {recalled, archived} as JSON: the typed memories and the archived turns (with their BM25 "
            "scores) that build_prompt would put in a prompt's memory block for TEXT. Nothing is counted "
            "against any dedup window."
        ),
    )
    _add_owner_arguments(search)
    search.add_argument("text", help="the text to search for, as a user would ask it")
    search.add_argument("--k", type=int, help="typed memories to return (default TURNSTREAM_RECALL_K)")
    search.set_defaults(run=run_search)


def _add_owner_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("user", nargs="?", help="user id (omit it with --session)")
    parser.add_argument(
        "--session", help="read the memories of this session's turns without a user, instead of a user's"
    )
    parser.add_argument("--tenant", help="the user's (or the session's) tenant, if any")


def _owner(args: argparse.Namespace) -> str:
    """The memory owner the arguments name: a user, or with --session a session without a user."""
    if args.session is not None:
        if args.user is not None:
            raise CliError("give a user id or --session, not both", code=2)
        if not args.session:
            raise CliError("--session must not be empty", code=2)
        return session_owner(session_key(args.session, args.tenant))
    if not args.user:
        raise CliError("a user id is required (or --session SESSION)", code=2)
    return user_owner(args.user, args.tenant)


def _describe(args: argparse.Namespace) -> str:
    named = f"session {args.session}" if args.session is not None else f"user {args.user}"
    return f"{named} of tenant {args.tenant}" if args.tenant else named


async def _list(owner: str) -> list[Memory]:
    store = MemoryStore.from_settings(configured_settings(redis=True))
    try:
        return await store.list(owner)
    finally:
        await store.aclose()


def run_list(args: argparse.Namespace) -> int:
    owner = _owner(args)
    try:
        memories = asyncio.run(_list(owner))
    except REDIS_UNAVAILABLE as error:
        raise CliError(f"cannot reach Redis: {error}") from None
    if not memories:
        raise CliError(f"no memories for {_describe(args)}")
    sys.stdout.write(orjson.dumps([m.model_dump() for m in memories], option=orjson.OPT_INDENT_2).decode() + "\n")
    return 0


async def _search(owner: str, text: str, k: int | None) -> Prompt:
    store = GatewayMemory.from_settings(configured_settings(redis=True))
    try:
        return await store.search(owner, text, k)
    finally:
        await store.aclose()


def run_search(args: argparse.Namespace) -> int:
    if args.k is not None and args.k < 0:
        raise CliError("--k must be 0 or more", code=2)
    try:
        prompt = asyncio.run(_search(_owner(args), args.text, args.k))
    except REDIS_UNAVAILABLE as error:
        raise CliError(f"cannot reach Redis: {error}") from None
    found = {"recalled": prompt.recalled, "archived": prompt.archived}
    sys.stdout.write(orjson.dumps(found, option=orjson.OPT_INDENT_2).decode() + "\n")
    return 0
