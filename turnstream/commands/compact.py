"""`turnstream compact`: compact one conversation read from a file or stdin, print the result as JSON."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import orjson

from turnstream.cli import CliError
from turnstream.compaction import MessageError
from turnstream.compaction.compactor import compact
from turnstream.compaction.strategies.base import Strategy
from turnstream.settings import Settings

_SHAPES = 'a JSON array of messages, an object with "messages", or JSON Lines (one message a line)'


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "compact",
        help="compact a conversation (OpenAI chat messages) to a token budget",
        description=f"Read {_SHAPES}; print the compaction result as one JSON object.",
    )
    parser.add_argument("file", nargs="?", default="-", metavar="FILE|-", help="input file (default: stdin)")
    parser.add_argument(
        "--budget-tokens", type=int, metavar="N", help="token budget (default: TURNSTREAM_BUDGET_TOKENS)"
    )
    parser.add_argument("--budget-messages", type=int, metavar="N", help="also cap the number of messages")
    parser.add_argument(
        "--llm", action="store_true", help="digest dropped turns with the LLM strategies (needs OPENAI_BASE_URL)"
    )
    parser.set_defaults(run=run)


def parse_messages(data: bytes) -> list[Any]:
    """Messages from a JSON array, an object with "messages", or JSON Lines."""
    try:
        document = orjson.loads(data)
    except orjson.JSONDecodeError:
        lines = [line for line in data.splitlines() if line.strip()]
        try:
            messages = [orjson.loads(line) for line in lines]
        except orjson.JSONDecodeError as error:
            raise CliError(f"input is not {_SHAPES}: {error}", code=2) from None
        if not messages:
            raise CliError(f"input is empty: expected {_SHAPES}", code=2) from None
        return messages
    if isinstance(document, list):
        return document
    if isinstance(document, dict) and isinstance(listed := document.get("messages"), list):
        return listed
    if isinstance(document, dict) and "role" in document:
        return [document]  # JSON Lines holding a single message
    raise CliError(f"input is not {_SHAPES}", code=2)


def _strategy(settings: Settings, llm: bool) -> Strategy:
    if llm and not settings.llm_enabled:
        raise CliError("--llm needs an OpenAI-compatible endpoint: set OPENAI_BASE_URL", code=2)
    # lazily: --help stays fast, and only --llm loads the openai client
    if llm:
        from turnstream.llm.strategies import build_llm_strategy

        return build_llm_strategy(settings)
    from turnstream.compaction.strategies.offline import build_strategy

    return build_strategy(settings)


def run(args: argparse.Namespace) -> int:
    settings = Settings()
    budget_tokens = settings.budget_tokens if args.budget_tokens is None else args.budget_tokens
    budget_messages = settings.budget_messages if args.budget_messages is None else args.budget_messages
    if budget_tokens < 1:
        raise CliError(f"--budget-tokens must be positive, got {budget_tokens}", code=2)
    if budget_messages is not None and budget_messages < 1:
        raise CliError(f"--budget-messages must be positive, got {budget_messages}", code=2)
    try:
        data = sys.stdin.buffer.read() if args.file == "-" else Path(args.file).read_bytes()
    except OSError as error:
        raise CliError(f"cannot read {args.file}: {error.strerror}", code=2) from None
    messages = parse_messages(data)
    strategy = _strategy(settings, args.llm)
    try:
        result = compact(messages, budget_tokens, strategy=strategy, budget_messages=budget_messages)
    except MessageError as error:
        raise CliError(f"invalid input: {error}", code=2) from None
    sys.stdout.buffer.write(orjson.dumps(result.to_dict()) + b"\n")
    return 0
