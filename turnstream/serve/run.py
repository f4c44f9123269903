"""The API's process: listen, print where, serve until SIGTERM or SIGINT, then finish what is in flight."""

from __future__ import annotations

import asyncio
import signal

from aiohttp import web

from turnstream.errors import TurnstreamError
from turnstream.serve.app import build_app
from turnstream.serve.service import Backend
from turnstream.serve.tenants import TokenTable
from turnstream.settings import Settings


class ListenError(TurnstreamError, OSError):
    """The address cannot be listened on."""


def url_of(host: str, port: int) -> str:
    return f"http://{f'[{host}]' if ':' in host else host}:{port}/"


async def serve(settings: Settings, tokens: TokenTable | None) -> None:
    """Serve on settings.serve_bind:serve_port until a stop signal; requests in flight get
    serve_shutdown_seconds to finish, then the producer flushes and everything closes."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    backend = Backend(settings)
    backend.start()
    runner = web.AppRunner(
        build_app(backend, tokens, settings.serve_max_body_bytes),
        access_log=None,
        shutdown_timeout=settings.serve_shutdown_seconds,
    )
    try:
        await runner.setup()
        site = web.TCPSite(runner, settings.serve_bind, settings.serve_port)
        try:
            await site.start()
        except OSError as error:
            raise ListenError(
                f"cannot listen on {settings.serve_bind}:{settings.serve_port}: {error.strerror or error}"
            ) from None
        bound = runner.addresses[0][1] if runner.addresses else settings.serve_port
        print(f"SERVE_URL={url_of(settings.serve_bind, bound)}", flush=True)
        await stop.wait()
    finally:
        await runner.cleanup()  # stops listening, waits for the requests in flight (at most shutdown_timeout)
        await backend.aclose()
