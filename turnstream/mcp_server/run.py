"""`turnstream mcp` as a process: the tools over stdio (one client, the configured tenant) or streamable HTTP
(many clients, a tenant per token), until the client closes stdin or SIGTERM/SIGINT arrives; exit 0 either way."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
from collections.abc import Iterator

from turnstream.mcp_server.auth import with_tenants
from turnstream.mcp_server.tools import Tools, build_server
from turnstream.serve.run import ListenError, url_of
from turnstream.serve.tenants import TokenTable
from turnstream.settings import Settings

MCP_PATH = "/mcp"


STDIO_STOP_SECONDS = 2.0
"""How long a stopping stdio server lets a tool call in flight finish."""


async def serve_stdio(settings: Settings, tenant: str | None) -> None:
    """Until the client closes stdin, or a stop signal; then the clients close and the process exits 0.

    The SDK reads stdin on a thread that a cancellation cannot interrupt, so after a stop signal the process
    ends with os._exit once the tool call in flight (if any) had its time and the Redis pool is closed: nothing
    is left to flush, every tool's writes are awaited within its call."""
    tools = Tools(settings, tenant)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    task = asyncio.ensure_future(build_server(tools).run_stdio_async())
    stopping = asyncio.ensure_future(stop.wait())
    await asyncio.wait({task, stopping}, return_when=asyncio.FIRST_COMPLETED)
    if task.done():
        stopping.cancel()
        await tools.aclose()
        task.result()
        return
    task.cancel()
    await asyncio.wait({task}, timeout=STDIO_STOP_SECONDS)
    await tools.aclose()
    sys.stdout.flush()
    os._exit(0)


async def serve_http(settings: Settings, tokens: TokenTable) -> None:
    """Streamable HTTP at /mcp on serve_bind and the given port; stateless, so each request is checked and scoped
    on its own and any replica can answer it."""
    import uvicorn

    class Server(uvicorn.Server):
        @contextlib.contextmanager
        def capture_signals(self) -> Iterator[None]:
            # uvicorn re-raises a captured SIGTERM once it has stopped, so the process would end by the signal
            # (status -15); the handlers below stop it and the process exits 0
            yield

    tools = Tools(settings, None)
    app = build_server(tools).streamable_http_app(
        streamable_http_path=MCP_PATH, stateless_http=True, json_response=True, host=settings.serve_bind
    )
    server = Server(
        uvicorn.Config(
            with_tenants(app, tokens),
            host=settings.serve_bind,
            port=settings.serve_port,
            log_level="warning",
            timeout_graceful_shutdown=int(settings.serve_shutdown_seconds),
        )
    )
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, lambda: setattr(server, "should_exit", True))
    serving = asyncio.ensure_future(server.serve())
    try:
        while not server.started:
            if serving.done():
                serving.result()  # an error starting it, raised here
                raise ListenError(f"cannot listen on {settings.serve_bind}:{settings.serve_port}")
            await asyncio.sleep(0.02)
        port = server.servers[0].sockets[0].getsockname()[1]
        print(f"MCP_URL={url_of(settings.serve_bind, port).rstrip('/')}{MCP_PATH}", flush=True)
        await serving
    finally:
        await tools.aclose()
