"""Real services for integration tests: configured ones, else testcontainers, else the embedded stack."""

from __future__ import annotations

import os
from pathlib import Path
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from typing import Iterator

import pytest

from turnstream.settings import Settings
from turnstream.streams.embedded import EmbeddedStack

pytest_plugins = ["tests.support.llm_server"]
"""The local OpenAI-compatible server fixture `llm_server`, for every test that needs an LLM."""

KAFKA_ENV = "TURNSTREAM_TEST_KAFKA_URL"
TESTS = Path(__file__).parent
FOLDER_MARKERS = {"unit": pytest.mark.unit, "integration": pytest.mark.integration}
"""A test's marker comes from the folder it lives in: tests/unit needs no services, tests/integration does."""


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        folder = item.path.relative_to(TESTS).parts[0]
        if folder in FOLDER_MARKERS:
            item.add_marker(FOLDER_MARKERS[folder])

REDIS_ENV = "TURNSTREAM_TEST_REDIS_URL"


@dataclass(frozen=True)
class Services:
    """Where the integration tests' broker and Redis answer."""

    kafka_url: str
    redis_url: str
    origin: str
    """'configured', 'testcontainers' or 'embedded'."""


def _docker_answers() -> bool:
    try:
        import docker

        docker.from_env(timeout=3).ping()
    except Exception:  # any failure means "no engine here": the embedded stack takes over
        return False
    return True


@contextmanager
def _containers(need_kafka: bool, need_redis: bool) -> Iterator[tuple[str | None, str | None]]:
    from testcontainers.kafka import KafkaContainer
    from testcontainers.redis import RedisContainer

    with ExitStack() as stack:
        kafka_url = redis_url = None
        if need_kafka:
            kafka = stack.enter_context(KafkaContainer())
            kafka_url = f"kafka://{kafka.get_bootstrap_server()}"
        if need_redis:
            redis = stack.enter_context(RedisContainer())
            redis_url = f"redis://{redis.get_container_host_ip()}:{redis.get_exposed_port(6379)}/0"
        yield kafka_url, redis_url


@pytest.fixture(scope="session")
def services() -> Iterator[Services]:
    """One broker and one Redis for the whole test session, stopped at its end."""
    kafka_url, redis_url = os.environ.get(KAFKA_ENV), os.environ.get(REDIS_ENV)
    if kafka_url and redis_url:
        yield Services(kafka_url, redis_url, "configured")
        return
    if _docker_answers():
        with _containers(not kafka_url, not redis_url) as (started_kafka, started_redis):
            yield Services(kafka_url or started_kafka, redis_url or started_redis, "testcontainers")
        return
    with EmbeddedStack(kafka=not kafka_url, redis=not redis_url) as stack:
        yield Services(kafka_url or stack.kafka_url, redis_url or stack.redis_url, "embedded")


@pytest.fixture(scope="session")
def kafka_url(services: Services) -> str:
    return services.kafka_url


@pytest.fixture(scope="session")
def redis_url(services: Services) -> str:
    return services.redis_url


@pytest.fixture
def settings(services: Services, request: pytest.FixtureRequest) -> Settings:
    """Settings on the test services, with a topic prefix of the test's own so tests never share topics."""
    prefix = "t-" + "".join(c if c.isalnum() else "-" for c in request.node.name)[:60]
    return Settings(kafka_url=services.kafka_url, redis_url=services.redis_url, topic_prefix=prefix)
