"""The serve tests' live stack (a worker, `turnstream serve`, two tenants' tokens), with a worker that re-syncs
what Redis lost every second: the MCP tests record through the API and read through the MCP tools."""

from __future__ import annotations

import uuid

import pytest

from tests.integration.serve.conftest import live, tokens_file  # noqa: F401 - fixtures shared with the serve tests
from turnstream.settings import Settings


@pytest.fixture(scope="module")
def live_settings(apache_kafka_url: str, redis_url: str) -> Settings:
    return Settings(
        kafka_url=apache_kafka_url,
        redis_url=redis_url,
        topic_prefix=f"t-mcp-{uuid.uuid4().hex[:8]}",
        turn_partitions=4,
        resync_interval_seconds=1,
    )
