"""`turnstream forget --user U | --session S [--tenant T]`: erase a user or a session, Table rows included."""

from __future__ import annotations

import argparse
import asyncio

from turnstream.cli import CliError
from turnstream.commands._services import client_logging, configured_settings, in_one_line
from turnstream.operations.erasure import ErasureNotConfirmed, erase


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
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


def run(args: argparse.Namespace) -> int:
    client_logging()
    settings = configured_settings(kafka=not args.dry_run, redis=True)
    if args.user == "" or args.session == "":
        raise CliError("--user and --session need a non-empty id", code=2)
    with in_one_line(ErasureNotConfirmed):
        what, counts = asyncio.run(
            erase(settings, user=args.user, session=args.session, tenant=args.tenant, dry_run=args.dry_run)
        )
    verb = "would remove" if args.dry_run else "removed"
    print(f"{what}: {verb}")
    for kind, count in sorted(counts.items()):
        print(f"  {kind}: {count}")
    return 0
