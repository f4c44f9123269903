"""Workers as child processes: started with the settings in their environment, stopped by process id."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from typing import IO

from pydantic import SecretStr

from turnstream.settings import Settings
from turnstream.stack.services import die_with_parent, free_port

STOP_GRACE_SECONDS = 20.0


def settings_env(settings: Settings) -> dict[str, str]:
    """The environment variables that reproduce `settings` in a child process."""
    env = {}
    for name, value in settings.model_dump().items():
        if value is None or name.startswith("openai_"):
            continue
        if isinstance(value, SecretStr):  # the child needs the secret itself, not its mask
            value = value.get_secret_value()
        env[f"TURNSTREAM_{name.upper()}"] = str(value)
    if settings.openai_base_url:
        env["OPENAI_BASE_URL"] = settings.openai_base_url
        env["OPENAI_API_KEY"] = settings.openai_api_key.get_secret_value()
    return env


def start_worker(settings: Settings, log: IO[bytes], loglevel: str = "info") -> subprocess.Popen[bytes]:
    """`turnstream worker` for `settings` (URLs must be set), its Faust web server on a free loopback port."""
    env = {**os.environ, **settings_env(settings), "TURNSTREAM_WEB_PORT": str(settings.web_port or free_port())}
    return subprocess.Popen(
        [sys.executable, "-m", "turnstream", "worker", "--loglevel", loglevel],
        stdout=log,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        env=env,
        preexec_fn=die_with_parent,
    )


def stop_process(process: subprocess.Popen[bytes], grace: float = STOP_GRACE_SECONDS) -> None:
    """SIGTERM, then SIGKILL after `grace` seconds."""
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(grace)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
