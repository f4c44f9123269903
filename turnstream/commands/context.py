"""`turnstream context get SESSION` / `context prompt SESSION TEXT`: a session's context, or a prompt built from it, as JSON;
`context get SESSION --at-version N` / `--at-turn ID`: the context as it was, rebuilt from the turns topic."""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import TYPE_CHECKING

import orjson

from turnstream.cli import CliError
from turnstream.client import ContextClient
from turnstream.commands._services import client_logging, configured_settings, in_one_line
from turnstream.prompt.assemble import Prompt
from turnstream.redis.errors import REDIS_UNAVAILABLE
from turnstream.schemas.context import ContextDoc
from turnstream.schemas.ids import session_key

if TYPE_CHECKING:
    from turnstream.session.replay import Target


GET_DESCRIPTION = (
    "Print a session's context document as JSON; exit 1 when the session has none. "
    "With --at-version N or --at-turn ID, print the document as it was at that version (or right after that turn "
    "applied) instead, rebuilt from the session's records in the turns topic by the same session core the worker "
    "runs; run it with the worker's TURNSTREAM_* settings (budgets, and the LLM's when one makes summaries), or the "
    "rebuild compacts otherwise. Turns past the turns topic's retention are gone and cannot be replayed; a session "
    "erased by `turnstream forget` is not rebuilt. A line on stderr says whether the rebuilt document equals the one "
    "Redis holds (when Redis holds that version; it keeps only the newest), comparing every field but updated_at and "
    "timings: exit 0 when it is equal or not compared, 1 when it differs or the version is not in the log. The "
    "worker's clock is approximated by the records' times: a session idle past TURNSTREAM_SESSION_TTL_SECONDS starts "
    "afresh, within the expiry sweep's period."
)


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser("context", help="read compacted contexts from Redis")
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    get = actions.add_parser(
        "get",
        help="print a session's context document as JSON (--at-version N: as it was, rebuilt from the turns topic)",
        description=GET_DESCRIPTION,
    )
    get.add_argument("session", help="session id")
    get.add_argument("--tenant", help="the session's tenant, if it has one")
    get.add_argument("--user", help="the session's user id: one round trip instead of two")
    earlier = get.add_mutually_exclusive_group()
    earlier.add_argument(
        "--at-version", type=int, metavar="N", help="the document at version N, rebuilt from the turns topic"
    )
    earlier.add_argument(
        "--at-turn", metavar="ID", help="the document right after turn ID applied, rebuilt from the turns topic"
    )
    get.set_defaults(run=run_get)
    prompt = actions.add_parser(
        "prompt",
        help="print the prompt for a user message: context, profile, recalled memories and turns",
        description=(
            "Print {messages, recalled, archived, skipped_recall, timings} as JSON (with --provenance, sources too): `archived` lists the "
            "recalled turns with their BM25 scores (a turn around a hit has hit=false). This is a real "
            "request: the recalled memories count towards the session's dedup window."
        ),
    )
    prompt.add_argument("session", help="session id")
    prompt.add_argument("text", help="the user's new message")
    prompt.add_argument("--k", type=int, help="memories to recall (default TURNSTREAM_RECALL_K)")
    prompt.add_argument("--tenant", help="the session's tenant, if it has one")
    prompt.add_argument("--user", help="user id owning the memories (default: the session's owner, looked up)")
    prompt.add_argument(
        "--provenance",
        action="store_true",
        help="also print `sources`: per message, the turns, facts, summarized span, memories and archived turns it came from",
    )
    prompt.set_defaults(run=run_prompt)


async def _get(session: str, tenant: str | None, user: str | None) -> ContextDoc | None:
    async with ContextClient.from_settings(configured_settings(redis=True)) as client:
        return await client.get(session, tenant=tenant, user_id=user)


def run_get(args: argparse.Namespace) -> int:
    if args.at_version is not None or args.at_turn is not None:
        return run_get_earlier(args)
    try:
        doc = asyncio.run(_get(args.session, args.tenant, args.user))
    except REDIS_UNAVAILABLE as error:
        raise CliError(f"cannot reach Redis: {error}") from None
    if doc is None:
        raise CliError(f"no context for session {session_key(args.session, args.tenant)}")
    sys.stdout.write(doc.model_dump_json(indent=2) + "\n")
    return 0


def _target(args: argparse.Namespace) -> Target:
    from turnstream.session.replay import Target

    if args.at_version is not None and args.at_version < 1:
        raise CliError("--at-version must be 1 or more (version N is the context after N changes)", code=2)
    if args.at_turn == "":
        raise CliError("--at-turn needs a turn id", code=2)
    return Target(version=args.at_version, turn_id=args.at_turn)


def run_get_earlier(args: argparse.Namespace) -> int:
    """The document at --at-version or --at-turn on stdout; on stderr, how it compares with the stored one."""
    # here, not at the top: the session core and the Kafka reader are for this alone, not for every `turnstream` run
    from turnstream.kafka.session_log import LogUnreadable
    from turnstream.operations.rebuild import NotInLog, rebuild_context, verdict

    target = _target(args)
    client_logging()
    settings = configured_settings(kafka=True, redis=True)
    with in_one_line(NotInLog, LogUnreadable):
        result = asyncio.run(rebuild_context(settings, args.session, args.tenant, args.user, target))
    sys.stdout.write(result.doc.model_dump_json(indent=2) + "\n")
    line, code = verdict(result, settings.budget_tokens, settings.turns_topic)
    sys.stderr.write(line + "\n")
    return code


async def _prompt(args: argparse.Namespace) -> Prompt:
    async with ContextClient.from_settings(configured_settings(redis=True)) as client:
        return await client.build_prompt(
            args.session, args.text, k=args.k, tenant=args.tenant, user_id=args.user, provenance=args.provenance
        )


def run_prompt(args: argparse.Namespace) -> int:
    if args.k is not None and args.k < 0:
        raise CliError("--k must be 0 or more", code=2)
    try:
        prompt = asyncio.run(_prompt(args))
    except REDIS_UNAVAILABLE as error:
        raise CliError(f"cannot reach Redis: {error}") from None
    sys.stdout.write(orjson.dumps(prompt.to_dict(), option=orjson.OPT_INDENT_2).decode() + "\n")
    return 0
