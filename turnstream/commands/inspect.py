"""`turnstream inspect`: serve the session inspector web page until Ctrl-C or SIGTERM."""

from __future__ import annotations

import argparse
import asyncio
import signal

from turnstream.cli import CliError, require_extra
from turnstream.commands._args import port
from turnstream.commands._services import client_logging, configured_settings
from turnstream.redis.connect import redis_client
from turnstream.redis.errors import REDIS_UNAVAILABLE
from turnstream.settings import Settings


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "inspect",
        help="serve a web page showing what each session's context holds (reads Redis; the turns topic for earlier versions)",
        description=(
            "Serve the session inspector: a list of the sessions in Redis (search by session, user or tenant) "
            "and, per session, its compacted context laid out as the model gets it with each part's tokens, what "
            "was dropped, its owner's memories and profile, the latest write's stage timings, and a form showing "
            "what build_prompt returns for a question (nothing is recorded), and with TURNSTREAM_KAFKA_URL set its "
            "earlier versions, rebuilt from the turns topic (as `turnstream context get --at-version`), and at /diff/NAME "
            "the live prompts against shadow NAME's (as `turnstream diff NAME`). Reads Redis, "
            "and the turns topic for an earlier version or a diff's questions alone; changes nothing. Listens on "
            "loopback by default; any other address needs TURNSTREAM_INSPECT_TOKEN, which every request must "
            "then send (Authorization: Bearer TOKEN, or as the password when a browser asks). Prints "
            "INSPECT_URL=… once listening; Ctrl-C or SIGTERM stops it."
        ),
    )
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    parser.add_argument(
        "--port", type=port, help="port to listen on; 0 picks a free one (default TURNSTREAM_INSPECT_PORT, 8765)"
    )
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    require_extra("worker")  # aiohttp, the web server, comes with Faust
    from turnstream.inspector.app import is_loopback

    settings = configured_settings(redis=True)
    token = settings.inspect_token.get_secret_value() if settings.inspect_token else None
    if token is not None and not token.strip():
        raise CliError("TURNSTREAM_INSPECT_TOKEN is blank: set a real token or unset it", code=2)
    if token is None and not is_loopback(args.host):
        raise CliError(
            f"listening on {args.host} needs TURNSTREAM_INSPECT_TOKEN (a loopback address needs none)", code=2
        )
    client_logging()
    port = settings.inspect_port if args.port is None else args.port
    return asyncio.run(_serve(settings, args.host, port, token))


async def _serve(settings: Settings, host: str, port: int, token: str | None) -> int:
    from aiohttp import web

    from turnstream.inspector.app import build_app
    from turnstream.redis.inspection import InspectReader

    reader = InspectReader(redis_client(settings), settings)
    runner = web.AppRunner(build_app(reader, token), access_log=None)
    try:
        try:
            await reader.ping()
        except REDIS_UNAVAILABLE as error:
            raise CliError(f"cannot reach Redis: {error}") from None
        await runner.setup()
        site = web.TCPSite(runner, host, port)
        try:
            await site.start()
        except OSError as error:
            raise CliError(f"cannot listen on {host}:{port}: {error.strerror or error}") from None
        bound = runner.addresses[0][1] if runner.addresses else port
        shown = f"[{host}]" if ":" in host else host
        print(f"INSPECT_URL=http://{shown}:{bound}/", flush=True)
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(signum, stop.set)
        await stop.wait()
    finally:
        await runner.cleanup()
        await reader.aclose()
    return 0
