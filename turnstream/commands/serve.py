"""`turnstream serve`: the HTTP API over the gateway SDK, with a bearer token per tenant."""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path
from typing import TYPE_CHECKING

from turnstream.cli import CliError, require_extra
from turnstream.commands._args import port, positive_int
from turnstream.commands._services import client_logging, configured_settings
from turnstream.settings import Settings

if TYPE_CHECKING:
    from turnstream.serve.tenants import TokenTable


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "serve",
        help="serve the HTTP API: record turns, prompts, contexts, search and erasure, one tenant per token",
        description=(
            "Serve the gateway SDK over HTTP (/v1, OpenAPI at /v1/openapi.json; probes /livez and /readyz; "
            "Prometheus /metrics). Every /v1 request needs Authorization: Bearer TOKEN, and each token acts for one "
            'tenant (TURNSTREAM_SERVE_TOKENS_FILE: JSON {"TOKEN": "tenant"} or lines "TOKEN tenant"; or '
            "TURNSTREAM_SERVE_TOKENS=TOKEN=tenant,...); another tenant's sessions and users read as unknown (404). "
            "Without tokens it refuses to start, unless --open on a loopback address. Needs TURNSTREAM_KAFKA_URL "
            "and TURNSTREAM_REDIS_URL, and a running worker to apply turns and confirm erasures. Prints "
            "SERVE_URL=… once listening; SIGTERM or Ctrl-C lets requests in flight finish, then exits 0. "
            "Flags override the TURNSTREAM_SERVE_* variables."
        ),
    )
    parser.add_argument("--bind", help="address to listen on (default TURNSTREAM_SERVE_BIND, 127.0.0.1)")
    parser.add_argument("--port", type=port, help="port; 0 picks a free one (default TURNSTREAM_SERVE_PORT, 8780)")
    parser.add_argument("--tokens-file", type=Path, help="the tokens file (default TURNSTREAM_SERVE_TOKENS_FILE)")
    parser.add_argument(
        "--max-body-bytes",
        type=positive_int,
        help="largest request body, else 413 (default TURNSTREAM_SERVE_MAX_BODY_BYTES, 1 MiB)",
    )
    parser.add_argument(
        "--open",
        action="store_true",
        help="serve without tokens and without a tenant: development on a loopback address only",
    )
    parser.set_defaults(run=run)


def with_flags(settings: Settings, args: argparse.Namespace) -> Settings:
    """The settings with the flags given laid over them."""
    flags = {
        "serve_bind": args.bind,
        "serve_port": args.port,
        "serve_max_body_bytes": args.max_body_bytes,
        "serve_tokens_file": args.tokens_file,
    }
    return settings.model_copy(update={name: value for name, value in flags.items() if value is not None})


def tokens_of(settings: Settings, open_: bool) -> TokenTable | None:
    """The token table the settings give (CliError when it cannot be used), or None to serve open."""
    from turnstream.inspector.app import is_loopback
    from turnstream.serve.tenants import TokenFileError, token_table

    path = settings.serve_tokens_file
    try:
        text = Path(path).read_text(encoding="utf-8") if path is not None else None
    except OSError as error:
        raise CliError(f"cannot read the tokens file {path}: {error.strerror or error}", code=2) from None
    inline = settings.serve_tokens.get_secret_value() if settings.serve_tokens else None
    try:
        tokens = token_table(text, inline)
    except TokenFileError as error:
        raise CliError(f"unusable tokens ({path or 'TURNSTREAM_SERVE_TOKENS'}): {error}", code=2) from None
    if open_:
        if tokens is not None:
            raise CliError("--open serves without tokens, but tokens are configured: drop --open or the tokens", code=2)
        if not is_loopback(settings.serve_bind):
            raise CliError(
                f"--open is for loopback only; {settings.serve_bind} is not (configure tokens instead)", code=2
            )
        return None
    if tokens is None:
        raise CliError(
            "no tokens configured (TURNSTREAM_SERVE_TOKENS_FILE or TURNSTREAM_SERVE_TOKENS): refusing to "
            "serve; for local development on loopback, pass --open",
            code=2,
        )
    return tokens


def run(args: argparse.Namespace) -> int:
    require_extra("worker")  # aiohttp, the web server, comes with Faust
    settings = with_flags(configured_settings(kafka=True, redis=True), args)
    tokens = tokens_of(settings, args.open)
    client_logging()
    from turnstream.serve.run import ListenError, serve

    try:
        asyncio.run(serve(settings, tokens))
    except ListenError as error:
        raise CliError(str(error)) from None
    return 0
