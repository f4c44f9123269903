"""`turnstream schema turn|context`: the published JSON Schema of a record."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import orjson

from turnstream.cli import CliError
from turnstream.schemas.export import RECORDS, json_schema


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "schema",
        help="print the JSON Schema (draft 2020-12) of a turn or a context document",
        description="Print the JSON Schema gateways in any language can validate turns and contexts with.",
    )
    parser.add_argument("record", choices=RECORDS, help="which record")
    parser.add_argument("--out", type=Path, help="write to this file instead of stdout")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    text = orjson.dumps(json_schema(args.record), option=orjson.OPT_INDENT_2) + b"\n"
    if args.out is None:
        sys.stdout.buffer.write(text)
        return 0
    try:
        args.out.write_bytes(text)
    except OSError as error:
        raise CliError(f"cannot write {args.out}: {error.strerror}") from None
    return 0
