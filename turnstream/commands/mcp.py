"""`turnstream mcp`: turnstream's memory as MCP tools, over stdio (an agent host starts it) or streamable HTTP."""

from __future__ import annotations

import argparse
import asyncio
import re

from turnstream.cli import CliError, require_extra
from turnstream.commands._args import port
from turnstream.commands._services import client_logging, configured_settings
from turnstream.commands.serve import tokens_of
from turnstream.schemas.turn import SAFE_TENANT


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "mcp",
        help="serve turnstream's memory as MCP tools (prompt, search, remember, erase) over stdio or HTTP",
        description=(
            "An MCP server (the official mcp SDK) with four tools: get_prompt (a session's compacted context plus "
            "recalled memory, within a budget), search_memory (dated earlier turns and memories for a query), "
            "remember (a note as a typed long-term memory, written to the memory journal first so it survives a "
            "Redis loss) and erase_memory. Over stdio (the default: an agent host starts it) it acts for the "
            "tenant TURNSTREAM_MCP_TENANT (or --tenant); with --http it serves streamable HTTP at /mcp and every "
            "request needs a bearer token of the API's tokens (TURNSTREAM_SERVE_TOKENS_FILE, one tenant each). "
            "Needs TURNSTREAM_KAFKA_URL and TURNSTREAM_REDIS_URL; erasure needs a running worker. SIGTERM stops it "
            "with status 0."
        ),
    )
    parser.add_argument("--http", action="store_true", help="serve streamable HTTP instead of stdio")
    parser.add_argument("--tenant", help="the tenant of the stdio transport (default TURNSTREAM_MCP_TENANT)")
    parser.add_argument("--bind", help="with --http: address (default TURNSTREAM_SERVE_BIND, 127.0.0.1)")
    parser.add_argument("--port", type=port, help="with --http: port, 0 picks a free one (default 8781)")
    parser.add_argument("--tokens-file", help="with --http: the tokens file (default TURNSTREAM_SERVE_TOKENS_FILE)")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    try:
        import mcp  # noqa: F401 - the extra, checked before any work
    except ModuleNotFoundError:
        raise CliError("`turnstream mcp` needs the mcp SDK: pip install 'turnstream[mcp]'", code=2) from None
    require_extra("worker")  # the journal topic and erasure use the worker's clients
    settings = configured_settings(kafka=True, redis=True)
    client_logging()
    if not args.http:
        if args.bind or args.port is not None or args.tokens_file:
            raise CliError("--bind, --port and --tokens-file are for --http", code=2)
        tenant = args.tenant if args.tenant is not None else settings.mcp_tenant
        if tenant is not None and not (re.match(SAFE_TENANT, tenant) and len(tenant) <= 64):
            raise CliError(f"--tenant {tenant!r}: 1-64 of [A-Za-z0-9._-]", code=2)
        from turnstream.mcp_server.run import serve_stdio

        asyncio.run(serve_stdio(settings, tenant))
        return 0
    if args.tenant is not None:
        raise CliError("--tenant is for stdio; over HTTP each token names its tenant", code=2)
    flags = {
        "serve_bind": args.bind,
        "serve_port": 8781 if args.port is None else args.port,
        "serve_tokens_file": args.tokens_file,
    }
    settings = settings.model_copy(update={k: v for k, v in flags.items() if v is not None})
    tokens = tokens_of(settings, open_=False)
    assert tokens is not None  # tokens_of refuses to go on without tokens
    from turnstream.mcp_server.run import serve_http
    from turnstream.serve.run import ListenError

    try:
        asyncio.run(serve_http(settings, tokens))
    except ListenError as error:
        raise CliError(str(error)) from None
    return 0
