"""Fixtures every client test shares."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from turnstream.redis.writer import ContextWriter
from turnstream.settings import Settings


@pytest.fixture
async def store(redis_settings: Settings) -> AsyncIterator[ContextWriter]:
    """The worker's writer on the test's Redis, closed at the end."""
    store = ContextWriter.from_settings(redis_settings)
    yield store
    await store.aclose()
