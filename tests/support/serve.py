"""`turnstream serve` as a child process for tests: started on a free port, stopped by process id."""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from turnstream.settings import Settings
from turnstream.stack.processes import settings_env
from turnstream.stack.services import die_with_parent

START_TIMEOUT = 30.0


@dataclass
class Served:
    process: subprocess.Popen[str]
    url: str


def serve_command(*args: str) -> list[str]:
    return [sys.executable, "-m", "turnstream", "serve", *args]


@contextmanager
def serving(settings: Settings, tokens_file: Path | None, *args: str) -> Iterator[Served]:
    """`turnstream serve --port 0` on `settings` (its URLs as given, reachable or not), until the block ends."""
    env = {**os.environ, **settings_env(settings)}
    if tokens_file is not None:
        env["TURNSTREAM_SERVE_TOKENS_FILE"] = str(tokens_file)
    process = subprocess.Popen(
        serve_command("--port", "0", *args),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        env=env,
        text=True,
        preexec_fn=die_with_parent,
    )
    try:
        yield Served(process, _listening(process))
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(20)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def _listening(process: subprocess.Popen[str]) -> str:
    """The SERVE_URL the process prints once it listens."""
    assert process.stdout is not None
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        ready, _, _ = select.select([process.stdout], [], [], 0.2)
        if ready:
            line = process.stdout.readline()
            if line.startswith("SERVE_URL="):
                return line.strip().removeprefix("SERVE_URL=")
        if process.poll() is not None:
            raise AssertionError(
                f"turnstream serve exited with {process.returncode}: {process.stderr.read() if process.stderr else ''}"
            )
    raise AssertionError(f"turnstream serve printed no SERVE_URL within {START_TIMEOUT:.0f}s")


async def until_ready(url: str, timeout: float = START_TIMEOUT) -> None:
    """Until /readyz answers 200: the producer has connected (it does so in the background) and Redis answers."""
    import asyncio

    import aiohttp

    deadline = time.monotonic() + timeout
    async with aiohttp.ClientSession() as http:
        while True:
            async with http.get(url + "readyz") as reply:
                if reply.status == 200:
                    return
                body = await reply.text()
            assert time.monotonic() < deadline, f"{url} not ready within {timeout:.0f}s: {body}"
            await asyncio.sleep(0.1)
