"""Workers as child processes, started and stopped by process id."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from turnstream.settings import Settings
from turnstream.streams.embedded import free_port

STOP_GRACE_SECONDS = 20


def settings_env(settings: Settings) -> dict[str, str]:
    """The TURNSTREAM_* environment that reproduces `settings` in a child process."""
    env = {}
    for name, value in settings.model_dump().items():
        if value is None or name.startswith("openai_"):
            continue
        env[f"TURNSTREAM_{name.upper()}"] = str(value)
    if settings.openai_base_url:
        env["OPENAI_BASE_URL"] = settings.openai_base_url
        env["OPENAI_API_KEY"] = settings.openai_api_key.get_secret_value()
    return env


@contextmanager
def running_worker(settings: Settings, name: str = "worker") -> Iterator[subprocess.Popen[bytes]]:
    """A `turnstream worker` on the test services; its log is printed when the test fails."""
    env = {**os.environ, **settings_env(settings), "TURNSTREAM_WEB_PORT": str(free_port())}
    log = tempfile.NamedTemporaryFile(prefix=f"turnstream-{name}-", suffix=".log", delete=False)
    process = subprocess.Popen(
        [sys.executable, "-m", "turnstream", "worker", "--loglevel", "info"],
        stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env,
    )
    try:
        yield process
    except BaseException:
        print(f"--- {name} log ---\n{Path(log.name).read_text(errors='replace')[-6000:]}")
        raise
    finally:
        stop_process(process)
        log.close()
        Path(log.name).unlink(missing_ok=True)


def stop_process(process: subprocess.Popen[bytes]) -> None:
    """SIGTERM, then SIGKILL after a grace period."""
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(STOP_GRACE_SECONDS)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
