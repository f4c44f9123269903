"""`turnstream config`: the effective settings, as JSON, secrets masked."""

from __future__ import annotations

import argparse
import sys

import orjson

from turnstream.settings import Settings


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "config",
        help="print the effective settings (from TURNSTREAM_* variables) as JSON",
        description="Print every setting turnstream would use, read from TURNSTREAM_* and OPENAI_* variables.",
    )
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    settings = Settings()
    # secrets and the password part of URLs are masked: the output is safe to paste into a ticket
    sys.stdout.write(orjson.dumps(settings.redacted(), option=orjson.OPT_INDENT_2).decode() + "\n")
    return 0
