"""The README's sync gateway script, run as written against a real broker, worker and Redis."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support.worker import running_worker
from turnstream.client import SyncContextClient, TurnProducer
from turnstream.kafka.admin import ensure_topics
from turnstream.settings import Settings

README = Path(__file__).parents[3] / "README.md"


def gateway_script() -> str:
    """The first python block after the README's sentence introducing the sync gateway script."""
    after = README.read_text().split("A sync gateway script", 1)[1]
    match = re.search(r"```python\n(.*?)```", after, re.S)
    assert match, "no python block after 'A sync gateway script' in README.md"
    return match.group(1)


async def warm_up(settings: Settings, client: SyncContextClient, timeout: float = 120) -> None:
    """A first turn through the worker, so the script's wait measures a running pipeline, not the worker's start."""
    async with TurnProducer(settings) as producer:
        await (
            await producer.send(
                {"turn_id": "w-0", "session_id": "warm-up", "seq": 0, "message": {"role": "user", "content": "hello"}}
            )
        )
    deadline = time.monotonic() + timeout
    while client.get("warm-up") is None:
        assert time.monotonic() < deadline, "the worker applied no turn"
        time.sleep(0.2)


@pytest.mark.timeout(300)
async def test_the_readme_sync_gateway_script_runs_as_written(settings: Settings, tmp_path: Path) -> None:
    script = tmp_path / "gateway.py"
    script.write_text(gateway_script())
    env = {
        **os.environ,
        "TURNSTREAM_KAFKA_URL": settings.kafka_url or "",
        "TURNSTREAM_REDIS_URL": settings.redis_url or "",
        "TURNSTREAM_TOPIC_PREFIX": settings.topic_prefix,
    }
    await ensure_topics(settings)
    with running_worker(settings), SyncContextClient.from_settings(settings) as client:
        await warm_up(settings, client)
        done = subprocess.run(
            [sys.executable, str(script)], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120
        )
        assert done.returncode == 0, done.stderr[-3000:]
        printed = re.fullmatch(r"fresh=(\w+) messages=(\d+) redis_ms=([\d.]+)\n", done.stdout)
        assert printed, done.stdout
        assert printed.group(1) == "True" and int(printed.group(2)) >= 1
        doc = client.get("s-7", user_id="maya")
        assert doc is not None and doc.last_turn_id == "t-41"
        assert doc.messages[-1] == {"role": "user", "content": "Actually my budget is 3500 EUR."}
