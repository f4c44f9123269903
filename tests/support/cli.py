"""The `turnstream` command as a child process on a test's Redis and topic prefix."""

from __future__ import annotations

import os
import subprocess
import sys

from turnstream.settings import Settings


def turnstream(settings: Settings, *args: str) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "TURNSTREAM_REDIS_URL": settings.redis_url or "",
        "TURNSTREAM_TOPIC_PREFIX": settings.topic_prefix,
    }
    return subprocess.run(
        [sys.executable, "-m", "turnstream", *args], capture_output=True, text=True, env=env, timeout=60
    )
