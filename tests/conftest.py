"""Real services for integration tests: configured ones, else testcontainers, else started here.

The broker-facing tests run on Apache Kafka (`make kafka` fetches it) unless TURNSTREAM_TEST_BROKER=tansu;
a test parametrized over `broker` (`tests.support.services.on_each_broker`) runs on Apache Kafka and on the embedded Tansu. Each
service is started once per test session, and only when a test asks for it: a test that needs only Redis takes
`redis_settings` and starts no broker. The session's summary names the services it used.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.support.services import BROKERS
from turnstream.settings import Settings
from turnstream.stack.services import EmbeddedStack, tuned_for_tansu

pytest_plugins = ["tests.support.llm_server", "tests.support.embeddings_server"]
"""The local OpenAI-compatible server fixtures: `llm_server` for every test that needs an LLM, `embeddings_server`
for the openai embedder."""

KAFKA_ENV = "TURNSTREAM_TEST_KAFKA_URL"
"""An Apache Kafka (or compatible) broker the tests use instead of starting one."""
REDIS_ENV = "TURNSTREAM_TEST_REDIS_URL"
BROKER_ENV = "TURNSTREAM_TEST_BROKER"
"""Which broker the tests that take the default one run on: kafka (Apache Kafka, the default) or tansu."""
TESTS = Path(__file__).parent
FOLDER_MARKERS = {"unit": pytest.mark.unit, "checks": pytest.mark.checks, "integration": pytest.mark.integration}
"""A test's tier comes from the folder it lives in: tests/unit and tests/checks need no services (checks build the
wheel and run mypy), tests/integration does."""
SERVICE_FIXTURES = {"redis_url", "kafka_url", "apache_kafka_url", "tansu_url"}
USED_SERVICES = pytest.StashKey[list[str]]()
"""The services this session set up, in order: the summary names them, so a tier shows what it started. Under
pytest-xdist each worker process starts its own and hands their names back to the controller."""
LONGEST_FIRST = ("tests/integration/tools/test_bench.py", "tests/integration/kafka/test_cluster.py")
"""Dealt out first when the integration tier runs on several processes (`--dist loadfile` deals whole files in
collection order): each takes minutes, and dealt last it would run alone at the end while the other process idles."""


def default_broker() -> str:
    broker = os.environ.get(BROKER_ENV, "kafka")
    if broker not in BROKERS:
        raise pytest.UsageError(f"{BROKER_ENV}={broker!r}: use one of {', '.join(BROKERS)}")
    return broker


def test_broker(item: pytest.Item) -> str | None:
    """The broker an integration test talks to: its `broker` parameter, else the default; None for none."""
    callspec = getattr(item, "callspec", None)
    if callspec is not None and "broker" in callspec.params:
        return str(callspec.params["broker"])
    names = set(getattr(item, "fixturenames", ()))
    if "tansu_url" in names:
        return "tansu"
    return default_broker() if names & {"kafka_url", "apache_kafka_url"} else None


def fixtures_of(item: pytest.Item) -> set[str]:
    """The fixtures `item` takes, its own parameters (a `kafka_url` argument of a unit test) left out."""
    callspec = getattr(item, "callspec", None)
    return set(getattr(item, "fixturenames", ())) - set(callspec.params if callspec is not None else ())


def pytest_configure(config: pytest.Config) -> None:
    config.stash[USED_SERVICES] = []


def pytest_sessionfinish(session: pytest.Session) -> None:
    if hasattr(session.config, "workeroutput"):  # a pytest-xdist worker: the controller writes the summary
        session.config.workeroutput["services"] = session.config.stash[USED_SERVICES]


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: object) -> None:
    """A pytest-xdist worker finished: add the services it started to the controller's."""
    used = node.config.stash[USED_SERVICES]
    used.extend(name for name in getattr(node, "workeroutput", {}).get("services", ()) if name not in used)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, config: pytest.Config) -> None:
    terminalreporter.write_line(f"services used: {', '.join(config.stash[USED_SERVICES]) or 'none'}")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        folder = item.path.relative_to(TESTS).parts[0]
        if folder in FOLDER_MARKERS:
            item.add_marker(FOLDER_MARKERS[folder])
        if folder != "integration" and (asked := sorted(SERVICE_FIXTURES & fixtures_of(item))):
            raise pytest.UsageError(f"{item.nodeid} asks for {', '.join(asked)}: services are for tests/integration")
        if folder == "integration" and test_broker(item) == "kafka":
            item.add_marker(pytest.mark.kafka)
    items.sort(key=lambda item: item.nodeid.split("::")[0] not in LONGEST_FIRST)  # stable: the rest keep their order


@dataclass(frozen=True)
class Services:
    """Where the integration tests' broker and Redis answer."""

    kafka_url: str
    redis_url: str
    origin: str
    """The broker: 'kafka' (Apache Kafka) or 'tansu'."""


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


@contextmanager
def _service(name: str, configured: str | None, docker: bool, **stack_options: object) -> Iterator[str]:
    """The URL of service `name` ("kafka" or "redis"): the configured one, else a container, else one started here."""
    if configured:
        yield configured
    elif docker:
        with _containers(name == "kafka", name == "redis") as (kafka_url, redis_url):
            yield str(kafka_url if name == "kafka" else redis_url)
    else:
        with EmbeddedStack(kafka=name == "kafka", redis=name == "redis", **stack_options) as stack:  # type: ignore[arg-type]
            yield str(stack.kafka_url if name == "kafka" else stack.redis_url)


@pytest.fixture(scope="session")
def _docker() -> bool:
    return _docker_answers()


@pytest.fixture(scope="session")
def apache_kafka_url(_docker: bool, pytestconfig: pytest.Config) -> Iterator[str]:
    """An Apache Kafka broker for the session: the configured one, a container, else a local KRaft node."""
    pytestconfig.stash[USED_SERVICES].append("Apache Kafka")
    with _service("kafka", os.environ.get(KAFKA_ENV), _docker, broker="kafka") as url:
        yield url


@pytest.fixture(scope="session")
def tansu_url(pytestconfig: pytest.Config) -> Iterator[str]:
    """The embedded Tansu broker, started for the session."""
    pytestconfig.stash[USED_SERVICES].append("Tansu")
    with _service("kafka", None, False) as url:
        yield url


@pytest.fixture(scope="session")
def redis_url(_docker: bool, pytestconfig: pytest.Config) -> Iterator[str]:
    """One Redis for the session: the configured one, a container, else a local redis-server."""
    pytestconfig.stash[USED_SERVICES].append("Redis")
    with _service("redis", os.environ.get(REDIS_ENV), _docker) as url:
        yield url


@pytest.fixture
def broker() -> str:
    """The broker of this test: the default one, unless the test is parametrized over `broker`."""
    return default_broker()


@pytest.fixture
def kafka_url(broker: str, request: pytest.FixtureRequest) -> str:
    """Bootstrap URL of this test's broker."""
    return str(request.getfixturevalue("apache_kafka_url" if broker == "kafka" else "tansu_url"))


@pytest.fixture
def services(kafka_url: str, redis_url: str, broker: str) -> Services:
    return Services(kafka_url, redis_url, broker)


def topic_prefix(test_name: str) -> str:
    """A prefix of the test's own: its name, cut to fit, and a hash of the whole name, so that tests whose names
    differ only past the cut (`[kafka]` and `[tansu]` of one test) never share topics or Redis keys."""
    readable = "".join(c if c.isalnum() else "-" for c in test_name)[:50]
    return f"t-{readable}-{hashlib.blake2s(test_name.encode(), digest_size=4).hexdigest()}"


@pytest.fixture
def redis_settings(redis_url: str, request: pytest.FixtureRequest) -> Settings:
    """Settings on the test Redis alone, with a prefix of the test's own: no broker is started, and no kafka_url
    is set, so a test that reaches for the broker after all fails at once instead of hanging."""
    return Settings(kafka_url=None, redis_url=redis_url, topic_prefix=topic_prefix(request.node.name))


@pytest.fixture
def settings(services: Services, request: pytest.FixtureRequest) -> Settings:
    """Settings on the test services, with a topic prefix of the test's own so tests never share topics."""
    prefix = topic_prefix(request.node.name)
    settings = Settings(kafka_url=services.kafka_url, redis_url=services.redis_url, topic_prefix=prefix)
    return tuned_for_tansu(settings) if services.origin == "tansu" else settings
