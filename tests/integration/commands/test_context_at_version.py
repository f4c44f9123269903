"""`turnstream context get SESSION --at-version N` / `--at-turn ID` on a real broker, Redis and worker: the context
rebuilt from the turns topic equals what the worker stored, and an earlier version is the earlier context."""

from __future__ import annotations

import asyncio
import html
import os
import subprocess
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import orjson
import pytest
from aiohttp.test_utils import TestClient, TestServer

from tests.support.conversations import turns_for
from tests.support.pipeline import interleave, produce, wait_for_versions
from tests.support.worker import running_worker
from turnstream.cli import main
from turnstream.client import ContextClient, TurnProducer
from turnstream.compaction.compactor import compact
from turnstream.compaction.strategies.offline import build_strategy
from turnstream.inspector.app import build_app
from turnstream.kafka.admin import ensure_topics
from turnstream.redis.connect import redis_client
from turnstream.redis.inspection import InspectReader
from turnstream.session import CoreConfig
from turnstream.settings import Settings
from turnstream.stack.processes import settings_env

pytestmark = pytest.mark.integration

TIMES = {"updated_at", "timings"}
"""What a document says of when and how fast it was computed: not compared."""


@dataclass(frozen=True)
class Ran:
    code: int
    out: str
    err: str


def context_get(settings: Settings, *args: str) -> Ran:
    """`turnstream context get` as its own process, with every setting the worker runs with."""
    env = {**os.environ, **settings_env(settings)}
    command = [sys.executable, "-m", "turnstream", "context", "get", *args]
    result = subprocess.run(command, capture_output=True, text=True, env=env, timeout=60)
    return Ran(result.returncode, result.stdout, result.stderr)


@pytest.fixture
def in_process(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Callable[..., Awaitable[Ran]]:
    """`turnstream context get` through the command's entry point in this process (no interpreter to start)."""

    async def run(settings: Settings, *args: str) -> Ran:
        for name, value in settings_env(settings).items():
            monkeypatch.setenv(name, value)
        code = await asyncio.to_thread(main, ["context", "get", *args])  # the command runs its own event loop
        out, err = capsys.readouterr()
        return Ran(code, out, err)

    return run


def content(doc: dict[str, Any]) -> dict[str, Any]:
    return {name: value for name, value in doc.items() if name not in TIMES}


def batch_messages(turns: list[dict[str, Any]], settings: Settings) -> list[dict[str, Any]]:
    """What batch compaction makes of `turns`: the streamed context must say the same at every version."""
    return list(
        compact(
            [t["message"] for t in turns],
            settings.budget_tokens,
            strategy=build_strategy(settings),
            times=[t["ts"] for t in turns],
            headroom_tokens=CoreConfig.from_settings(settings).headroom_tokens,
        ).messages
    )


async def test_at_version_rebuilds_what_the_worker_stored_and_the_versions_before(
    settings: Settings, in_process: Callable[..., Awaitable[Ran]]
) -> None:
    settings = settings.model_copy(update={"budget_tokens": 600, "turn_partitions": 2})
    sessions = {
        "r0": turns_for("r0", seed=31, count=40),
        "r1": turns_for("r1", seed=32, count=30, tenant="acme"),
        "r2": turns_for("r2", seed=33, count=24),
    }
    await ensure_topics(settings)
    with running_worker(settings) as worker:
        await produce(settings, interleave([turns[:-1] for turns in sessions.values()]))
        async with TurnProducer(settings) as producer:
            await producer.send(sessions["r0"][5])  # redelivered: skipped
            await producer.send_raw(b"r2", b"{not json")  # refused: dead-lettered
            await producer.send_raw(b"elsewhere", orjson.dumps(sessions["r2"][-1]))  # forwarded under r2 by the worker
            for turns in (sessions["r0"], sessions["r1"]):
                await producer.send(turns[-1])
            await producer.flush()
        async with ContextClient.from_settings(settings) as client:
            for sid, turns in sessions.items():
                await wait_for_versions(client, {sid: len(turns)}, worker, tenant=turns[0]["tenant"])
            stored = {sid: await client.get(sid, turns[0]["tenant"]) for sid, turns in sessions.items()}

    for sid, turns in sessions.items():
        doc = stored[sid]
        assert doc is not None and doc.marker_index is not None, sid  # compacted: there is something to rebuild
        tenant = ["--tenant", turns[0]["tenant"]] if turns[0]["tenant"] else []
        at = (sid, *tenant, "--at-version", str(doc.version))
        result = context_get(settings, *at) if sid == "r0" else await in_process(settings, *at)
        assert (result.code, result.err) == (0, f"equal to the stored version {doc.version}\n"), sid
        assert content(orjson.loads(result.out)) == content(orjson.loads(doc.to_json())), sid

    r0 = sessions["r0"]
    earlier = await in_process(settings, "r0", "--at-version", "12")
    assert (earlier.code, earlier.err) == (0, f"Redis holds version {len(r0)}; not compared\n")
    rebuilt = orjson.loads(earlier.out)
    assert (rebuilt["version"], rebuilt["last_turn_id"]) == (12, "r0-11")
    assert rebuilt["messages"] == batch_messages(r0[:12], settings) != stored["r0"].messages  # type: ignore[union-attr]

    after_turn = await in_process(settings, "r0", "--at-turn", "r0-11")
    assert after_turn.code == 0 and content(orjson.loads(after_turn.out)) == content(rebuilt)

    other = settings.model_copy(update={"budget_tokens": 900})
    other_budget = await in_process(other, "r0", "--at-version", str(len(r0)))
    assert other_budget.code == 1
    assert other_budget.err.startswith(f"differs from the stored version {len(r0)}: messages, ")
    assert "TURNSTREAM_BUDGET_TOKENS here is 900" in other_budget.err

    missing = await in_process(settings, "r0", "--at-version", "99")
    assert (missing.code, missing.out) == (1, "")
    assert missing.err == (
        f"turnstream: session r0 has {len(r0)} turns in the log (versions 1 to {len(r0)}); version 99 is not there\n"
    )

    await assert_the_inspector_links_the_versions(settings, len(r0), rebuilt["messages"][-1]["content"])


async def assert_the_inspector_links_the_versions(settings: Settings, stored: int, said_at_12: str) -> None:
    """The inspector's session page links earlier versions; each is the rebuild `--at-version` prints."""
    reader = InspectReader(redis_client(settings), settings)
    web = TestClient(TestServer(build_app(reader, None), host="127.0.0.1"))
    await web.start_server()
    try:
        page = await (await web.get("/sessions/r0")).text()
        assert f'href="/sessions/r0/versions?v={stored - 1}"' in page
        earlier = await web.get("/sessions/r0/versions", params={"v": "12"})
        text = await earlier.text()
        assert earlier.status == 200 and "Session r0 at version 12" in text
        assert f'<p id="comparison">Redis holds version {stored}; not compared</p>' in text
        assert html.escape(said_at_12) in text
        assert (
            f"(versions 1 to {stored}); version 999 is not there"
            in await (await web.get("/sessions/r0/versions?v=999")).text()
        )
        assert (await web.get("/sessions/r0/versions?v=twelve")).status == 400
    finally:
        await web.close()
        await reader.aclose()
