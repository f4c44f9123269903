"""One worker on Apache Kafka and one `turnstream serve` with two tenants' tokens, shared by the module's tests
(each uses sessions and users of its own); every request and reply is checked against the served document."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import aiohttp
import pytest

from tests.support.contract import Api, Contract
from tests.support.serve import Served, serving, until_ready
from tests.support.worker import RunningWorker, running_worker
from turnstream.kafka.admin import ensure_topics
from turnstream.settings import Settings

PARTITIONS = 4
ACME_TOKEN = "acme-token-0123456789abcdef"
GLOBEX_TOKEN = "globex-token-0123456789abcdef"
WAIT = 60.0


@dataclass
class Live:
    settings: Settings
    worker: RunningWorker
    served: Served
    tokens_file: Path
    acme: Api
    globex: Api


@pytest.fixture(scope="module")
def tokens_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("serve") / "tokens"
    path.write_text(f"# two tenants\n{ACME_TOKEN} acme\n{GLOBEX_TOKEN} globex\n")
    return path


@pytest.fixture(scope="module")
def live_settings(apache_kafka_url: str, redis_url: str) -> Settings:
    return Settings(
        kafka_url=apache_kafka_url,
        redis_url=redis_url,
        topic_prefix=f"t-serve-{uuid.uuid4().hex[:8]}",
        turn_partitions=PARTITIONS,
    )


@pytest.fixture(scope="module")
async def live(live_settings: Settings, tokens_file: Path) -> AsyncIterator[Live]:
    await ensure_topics(live_settings)
    with running_worker(live_settings) as worker:
        deadline = time.monotonic() + WAIT
        while worker.assigned(live_settings.turns_topic) != set(range(PARTITIONS)):
            assert worker.poll() is None and time.monotonic() < deadline, f"worker not assigned: {worker.log()[-3000:]}"
            await asyncio.sleep(0.2)
        with serving(live_settings, tokens_file) as served:
            await until_ready(served.url)
            async with aiohttp.ClientSession() as http:
                async with http.get(served.url + "v1/openapi.json") as reply:
                    contract = Contract(await reply.json())
                yield Live(
                    live_settings,
                    worker,
                    served,
                    tokens_file,
                    Api(served.url, ACME_TOKEN, contract, http),
                    Api(served.url, GLOBEX_TOKEN, contract, http),
                )


def turn(session: str, turn_id: str, text: str, user: str | None = None, role: str = "user") -> dict[str, object]:
    """A turn as a gateway sends it to the API: no tenant (the token's)."""
    value: dict[str, object] = {
        "turn_id": turn_id,
        "session_id": session,
        "message": {"role": role, "content": text},
        "ts": 1_700_000_000.0,
    }
    if user:
        value["user_id"] = user
    return value
