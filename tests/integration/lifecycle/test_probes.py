"""The worker's web port: health probes answer, conversations are not served."""

from __future__ import annotations

import asyncio
import time
import urllib.error
import urllib.request

import orjson

from tests.support.conversations import turns_for
from tests.support.pipeline import produce, wait_for_versions
from tests.support.worker import running_worker
from turnstream.client import ContextClient
from turnstream.kafka.admin import ensure_topics
from turnstream.settings import Settings
from turnstream.stack.services import free_port


def get(port: int, path: str) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


async def test_livez_readyz_and_no_table_views(settings: Settings) -> None:
    settings = settings.model_copy(update={"web_port": free_port()})
    port = settings.web_port
    turns = turns_for("probe", seed=1, count=5)
    await ensure_topics(settings)
    with running_worker(settings) as worker:
        deadline = time.monotonic() + 90
        status, body = 0, b""
        while time.monotonic() < deadline:
            try:
                status, body = get(port, "/readyz")
            except OSError:  # the web server is not listening yet
                status = 0
            if status == 200:
                break
            assert status in (0, 503), (status, body)
            await asyncio.sleep(0.5)
        assert status == 200, body
        assert orjson.loads(body) == {
            "ready": True,
            "partitions_assigned": True,
            "recovery_finished": True,
            "redis": True,
        }
        assert get(port, "/livez")[0] == 200
        await produce(settings, turns)
        async with ContextClient.from_settings(settings) as client:
            await wait_for_versions(client, {"probe": len(turns)}, worker)
        # the session's state is in the Table, and no web path serves it
        for path in ("/table/sessions/probe/", "/table/sessions/", "/router/sessions/get/?key=probe", "/graph/"):
            status, body = get(port, path)
            assert status == 404 and b"probe" not in body, (path, status, body[:200])


async def test_not_ready_while_redis_does_not_answer() -> None:
    from types import SimpleNamespace

    from redis.asyncio import Redis

    from turnstream.lifecycle.probes import readiness

    done = asyncio.Event()
    done.set()
    app = SimpleNamespace(
        consumer=SimpleNamespace(assignment=lambda: {"t-0"}),
        tables=SimpleNamespace(recovery=SimpleNamespace(completed=done)),
    )
    closed = Redis(port=free_port(), socket_connect_timeout=0.5)
    checks = await readiness(app, closed)  # type: ignore[arg-type]
    await closed.aclose()
    assert checks == {"partitions_assigned": True, "recovery_finished": True, "redis": False}
