"""turnstream_tools.benchmarks.serve_overhead runs to its table on the live stack (a short run: the figures are the bench's job)."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys

from tests.integration.serve.conftest import Live
from turnstream.stack.processes import settings_env


async def test_the_overhead_bench_prints_both_sides_of_both_calls(live: Live) -> None:
    env = {**os.environ, **settings_env(live.settings)}
    done = await asyncio.to_thread(
        subprocess.run,
        [sys.executable, "-m", "turnstream_tools.benchmarks.serve_overhead", "--rounds", "2", "--per-round", "8"],
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    lines = done.stdout.splitlines()
    for call in ("build_prompt", "record"):
        assert any(line.split()[:2] == [call, "sdk"] for line in lines)
        assert any(line.split()[:2] == [call, "serve"] for line in lines)
        assert any(line.startswith(f"{call:<13} overhead p50") and " ms (x" in line for line in lines)
