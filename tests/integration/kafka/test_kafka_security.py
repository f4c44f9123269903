"""Kafka security, live: one Apache Kafka with a SASL_PLAINTEXT (SCRAM-SHA-512) and an SSL listener, reached only
through the TURNSTREAM_KAFKA_* settings by a worker, `turnstream produce`, the topic admin and TurnProducer.

A wrong password or an untrusted CA ends the worker and `turnstream produce` at once with one line, and no
output line of either ever holds the SASL password.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.support.conversations import turns_for
from tests.support.pipeline import produce, wait_for_versions
from tests.support.tls import make_ca, make_server_identity
from tests.support.worker import running_worker
from turnstream.client import ContextClient
from turnstream.kafka.admin import ensure_topics
from turnstream.settings import Settings
from turnstream.stack.apache_kafka import KafkaNode, TlsFiles
from turnstream.stack.processes import stop_process
from turnstream.stack.services import EmbeddedStack

pytestmark = pytest.mark.kafka

USER = "turnstream-app"
PASSWORD = "scram-Pw-5e1f0c7a"
WRONG_PASSWORD = "scram-Wrong-9b2d44"
SECRETS = (PASSWORD, WRONG_PASSWORD)
STARTUP_TIMEOUT = 8.0
MODES = ("sasl", "ssl")
COMMAND_TIMEOUT = 120.0
"""Generous: a busy 2-core machine; a refusal is expected within STARTUP_TIMEOUT."""


@dataclass(frozen=True)
class SecureBroker:
    node: KafkaNode
    cafile: Path
    """The CA that signed the broker's certificate."""
    untrusted_cafile: Path
    """Another CA, which signed nothing the broker presents."""


@pytest.fixture(scope="module")
def secure_broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SecureBroker]:
    folder = tmp_path_factory.mktemp("kafka-tls")
    ca = make_ca(folder, "turnstream-test-ca")
    stranger = make_ca(folder, "stranger-ca")
    identity = make_server_identity(ca, folder)
    with EmbeddedStack(
        broker="kafka",
        redis=False,
        kafka_sasl_users={USER: PASSWORD},
        kafka_tls=TlsFiles(identity.certfile, identity.keyfile),
    ) as stack:
        assert stack.kafka_node is not None
        yield SecureBroker(stack.kafka_node, ca.certfile, stranger.certfile)


def kafka_env(
    broker: SecureBroker, mode: str, *, password: str = PASSWORD, cafile: Path | None = None
) -> dict[str, str]:
    """The TURNSTREAM_KAFKA_* variables of one secure listener."""
    if mode == "sasl":
        return {
            "TURNSTREAM_KAFKA_URL": broker.node.url("SASL_PLAINTEXT"),
            "TURNSTREAM_KAFKA_SECURITY_PROTOCOL": "SASL_PLAINTEXT",
            "TURNSTREAM_KAFKA_SASL_MECHANISM": "SCRAM-SHA-512",
            "TURNSTREAM_KAFKA_SASL_USERNAME": USER,
            "TURNSTREAM_KAFKA_SASL_PASSWORD": password,
        }
    return {
        "TURNSTREAM_KAFKA_URL": broker.node.url("SSL"),
        "TURNSTREAM_KAFKA_SECURITY_PROTOCOL": "SSL",
        "TURNSTREAM_KAFKA_SSL_CAFILE": str(cafile or broker.cafile),
    }


def command_env(variables: dict[str, str], redis_url: str, mode: str) -> dict[str, str]:
    """A child's environment: no inherited TURNSTREAM_* variable, a topic prefix of its own, no embedded fallback."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TURNSTREAM_", "OPENAI_"))}
    return {
        **env,
        **variables,
        "TURNSTREAM_REDIS_URL": redis_url,
        "TURNSTREAM_TOPIC_PREFIX": f"sec-{mode}-{uuid.uuid4().hex[:8]}",
        "TURNSTREAM_TURN_PARTITIONS": "2",
        "TURNSTREAM_EMBEDDED": "never",
        "TURNSTREAM_STARTUP_TIMEOUT_SECONDS": str(STARTUP_TIMEOUT),
    }


def settings_from(env: dict[str, str]) -> Settings:
    """The Settings a child builds from the same TURNSTREAM_* variables."""
    return Settings(**{k.removeprefix("TURNSTREAM_").lower(): v for k, v in env.items() if k.startswith("TURNSTREAM_")})


def jsonl(turns: list[dict[str, Any]]) -> bytes:
    return b"".join(orjson.dumps(turn) + b"\n" for turn in turns)


def turnstream(env: dict[str, str], *arguments: str, stdin: bytes = b"") -> subprocess.CompletedProcess[str]:
    result = subprocess.run(
        [sys.executable, "-m", "turnstream", *arguments],
        input=stdin,
        env=env,
        capture_output=True,
        timeout=COMMAND_TIMEOUT,
    )
    return subprocess.CompletedProcess(result.args, result.returncode, result.stdout.decode(), result.stderr.decode())


def assert_no_secret(output: str) -> None:
    for secret in SECRETS:
        assert secret not in output


@pytest.mark.parametrize("mode", MODES)
async def test_worker_applies_turns_produced_over_the_secure_listener(
    mode: str, secure_broker: SecureBroker, redis_url: str
) -> None:
    env = command_env(kafka_env(secure_broker, mode), redis_url, mode)
    settings = settings_from(env)
    assert settings.kafka_security_protocol == ("SASL_PLAINTEXT" if mode == "sasl" else "SSL")

    ready = await ensure_topics(settings)  # the topic admin, over the secure listener
    assert settings.turns_topic in ready.created and ready.replication_factor == 1
    again = await ensure_topics(settings)  # and it reads the layout it made
    assert again.created == [] and again.replication_factor == 1

    turns = turns_for("secure", seed=5, count=6)
    with running_worker(settings, name=f"worker-{mode}") as worker:
        await produce(settings, turns[:3])  # TurnProducer
        produced = turnstream(env, "produce", "-", stdin=jsonl(turns[3:]))
        assert produced.returncode == 0, produced.stderr
        assert produced.stdout.strip() == f"produced 3 turns to {settings.turns_topic}"
        async with ContextClient.from_settings(settings) as client:
            docs = await wait_for_versions(client, {"secure": len(turns)}, worker, timeout=COMMAND_TIMEOUT)
        stop_process(worker.process)  # by its pid, so its log holds its whole output, shutdown included
        worker_output = worker.log()
    doc = docs["secure"]
    assert doc.version == len(turns) and doc.last_turn_id == turns[-1]["turn_id"]
    assert doc.messages[-1] == turns[-1]["message"]
    assert "Traceback" not in worker_output
    assert_no_secret(worker_output + produced.stdout + produced.stderr)


REFUSALS = {
    "sasl": ("SaslAuthenticationFailed", "TURNSTREAM_KAFKA_SASL_PASSWORD"),
    "ssl": ("CERTIFICATE_VERIFY_FAILED", "TURNSTREAM_KAFKA_SSL_CAFILE"),
}


@pytest.mark.parametrize("command", [("worker",), ("produce", "-")], ids=["worker", "produce"])
@pytest.mark.parametrize("mode", MODES)
def test_refused_authentication_ends_at_once_in_one_line(
    mode: str,
    command: tuple[str, ...],
    secure_broker: SecureBroker,
    redis_url: str,
) -> None:
    """A wrong SCRAM password, or a CA that did not sign the broker's certificate: not transient, so no retries."""
    wrong = kafka_env(secure_broker, mode, password=WRONG_PASSWORD, cafile=secure_broker.untrusted_cafile)
    env = command_env(wrong, redis_url, mode)
    started = time.monotonic()
    result = turnstream(env, *command, stdin=jsonl(turns_for("refused", seed=1, count=2)))
    elapsed = time.monotonic() - started

    assert result.returncode == 1
    assert result.stdout == "" and "Traceback" not in result.stderr
    lines = [line for line in result.stderr.splitlines() if not line.startswith(("KAFKA_URL=", "REDIS_URL="))]
    assert len(lines) == 1, lines  # one error line, no "waiting for Kafka" attempts before it
    error, setting = REFUSALS[mode]
    assert lines[0].startswith("turnstream: ") and "authentication" in lines[0]
    assert error in lines[0] and setting in lines[0]
    assert wrong["TURNSTREAM_KAFKA_URL"].removeprefix("kafka://") in lines[0]
    assert elapsed < STARTUP_TIMEOUT, f"took {elapsed:.1f}s"
    assert_no_secret(result.stdout + result.stderr)
