"""Worker start-up: waiting for services, one-line failures, no embedded fallback when forbidden, no password in its output."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest
from pydantic import SecretStr

from tests.support.services import killed_on_failure
from turnstream.client import ContextClient, TurnProducer
from turnstream.kafka.admin import ensure_topics
from turnstream.settings import Settings
from turnstream.stack.processes import settings_env, stop_process
from turnstream.stack.services import LOOPBACK, die_with_parent, free_port, redis_answers, redis_server_binary

PASSWORDS = ("hunter2-url-0xA1", "redis-pw-0xB2", "sasl-pw-0xC3")


def clean_env(**variables: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TURNSTREAM_", "OPENAI_"))}
    return {**env, **variables}


def run_worker(env: dict[str, str], timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "turnstream", "worker"],
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def test_closed_port_exits_with_one_line_after_the_deadline() -> None:
    closed = free_port()
    started = time.monotonic()
    result = run_worker(
        clean_env(
            TURNSTREAM_KAFKA_URL=f"kafka://{LOOPBACK}:{closed}",
            TURNSTREAM_REDIS_URL=f"redis://default:{PASSWORDS[0]}@{LOOPBACK}:{free_port()}/0",
            TURNSTREAM_REDIS_PASSWORD=PASSWORDS[1],
            TURNSTREAM_KAFKA_SASL_PASSWORD=PASSWORDS[2],
            TURNSTREAM_STARTUP_TIMEOUT_SECONDS="3",
            TURNSTREAM_EMBEDDED="never",
        )
    )
    elapsed = time.monotonic() - started
    assert result.returncode == 1
    assert "Traceback" not in result.stderr and result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert lines[-1].startswith(f"turnstream: Kafka at {LOOPBACK}:{closed} did not answer within 3s")
    waits = [line for line in lines if line.startswith("turnstream: INFO waiting for Kafka")]
    assert len(waits) >= 2  # one line per failed attempt, with backoff in between
    assert all(line.startswith(("turnstream: ", "KAFKA_URL=", "REDIS_URL=")) for line in lines)
    assert 3 <= elapsed < 30
    for password in PASSWORDS:
        assert password not in result.stderr
    assert f"REDIS_URL=redis://default:***@{LOOPBACK}:" in result.stderr


def test_unreachable_redis_is_named_without_its_password(kafka_url: str) -> None:
    result = run_worker(
        clean_env(
            TURNSTREAM_KAFKA_URL=kafka_url,
            TURNSTREAM_REDIS_URL=f"redis://:{PASSWORDS[0]}@{LOOPBACK}:{free_port()}/0",
            TURNSTREAM_STARTUP_TIMEOUT_SECONDS="2",
        )
    )
    assert result.returncode == 1 and "Traceback" not in result.stderr
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith(f"turnstream: Redis at redis://:***@{LOOPBACK}:") and "did not answer within 2s" in last
    assert PASSWORDS[0] not in result.stderr


@pytest.mark.parametrize("unset", ["TURNSTREAM_KAFKA_URL", "TURNSTREAM_REDIS_URL"])
def test_embedded_never_without_a_url_is_one_line(unset: str) -> None:
    urls = {"TURNSTREAM_KAFKA_URL": f"kafka://{LOOPBACK}:9", "TURNSTREAM_REDIS_URL": f"redis://{LOOPBACK}:9/0"}
    del urls[unset]
    result = run_worker(clean_env(TURNSTREAM_EMBEDDED="never", **urls), timeout=60)
    assert result.returncode == 1
    assert result.stderr.strip().splitlines() == [
        f"turnstream: {unset} is not set and TURNSTREAM_EMBEDDED=never: set it, e.g. {unset}="
        + ("kafka://host:9092" if "KAFKA" in unset else "redis://host:6379/0")
    ]


def test_a_missing_embedding_model_is_one_line_from_the_embedding_process(tmp_path: Path) -> None:
    urls = {"TURNSTREAM_KAFKA_URL": f"kafka://{LOOPBACK}:9", "TURNSTREAM_REDIS_URL": f"redis://{LOOPBACK}:9/0"}
    env = clean_env(TURNSTREAM_EMBEDDINGS="local", TURNSTREAM_EMBEDDING_MODEL_DIR=str(tmp_path), **urls)
    result = run_worker(env, timeout=60)
    assert result.returncode == 1
    assert "Traceback" not in result.stderr  # the child's failure crosses over as its one line
    assert result.stderr.strip().splitlines()[-1] == (  # after the URLs the worker says it uses
        f"turnstream: no embedding model in {tmp_path} (manifest.json missing): run `make models`, or point "
        "TURNSTREAM_EMBEDDING_MODEL_DIR (or _ZH) at a model folder"
    )


def test_embedded_services_are_announced_with_a_warning() -> None:
    process = subprocess.Popen(
        [sys.executable, "-m", "turnstream", "worker"],
        env=clean_env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=die_with_parent,
    )
    with killed_on_failure(process):
        lines = [process.stderr.readline() for _ in range(4)]
        threading.Thread(target=process.stderr.read, daemon=True).start()
        stop_process(process)
    assert lines[0].startswith("KAFKA_URL=kafka://127.0.0.1:") and lines[1].startswith("REDIS_URL=redis://127.0.0.1:")
    assert lines[2].startswith("turnstream: WARNING TURNSTREAM_KAFKA_URL is unset: started an EMBEDDED Tansu broker")
    assert lines[3].startswith("turnstream: WARNING TURNSTREAM_REDIS_URL is unset: started an EMBEDDED redis-server")


@pytest.fixture
def redis_with_password() -> tuple[str, str]:
    """A redis-server of this test's own that requires a password; stopped by its process id."""
    port, password = free_port(), PASSWORDS[1]
    process = subprocess.Popen(
        [
            redis_server_binary(),
            "--port",
            str(port),
            "--bind",
            LOOPBACK,
            "--save",
            "",
            "--appendonly",
            "no",
            "--requirepass",
            password,
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        preexec_fn=die_with_parent,
    )
    try:
        deadline = time.monotonic() + 20
        while not redis_answers(port) and b"NOAUTH" not in _ping(port):
            assert process.poll() is None and time.monotonic() < deadline, "redis-server did not start"
            time.sleep(0.05)
        yield f"redis://{LOOPBACK}:{port}/0", password
    finally:
        stop_process(process, grace=5)


def _ping(port: int) -> bytes:
    import socket

    try:
        with socket.create_connection((LOOPBACK, port), timeout=1) as sock:
            sock.sendall(b"PING\r\n")
            return sock.recv(64)
    except OSError:
        return b""


async def test_worker_uses_the_redis_password_and_never_prints_a_password(
    settings: Settings, redis_with_password: tuple[str, str]
) -> None:
    redis_url, password = redis_with_password
    secured = settings.model_copy(
        update={
            "redis_url": redis_url,
            "redis_password": SecretStr(password),
            "kafka_sasl_password": SecretStr(PASSWORDS[2]),
            "startup_timeout_seconds": 30.0,
            "turn_partitions": 2,
        }
    )
    await ensure_topics(secured)  # before the first produce, or the broker auto-creates the topic its own way
    log = tempfile.NamedTemporaryFile(prefix="turnstream-secured-", suffix=".log", delete=False)
    process = subprocess.Popen(
        [sys.executable, "-m", "turnstream", "worker", "--loglevel", "info"],
        env={**clean_env(), **settings_env(secured), "TURNSTREAM_WEB_PORT": str(free_port())},
        stdout=log,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        preexec_fn=die_with_parent,
    )
    output = ""
    try:
        async with TurnProducer(secured) as producer:
            await (
                await producer.send(
                    {
                        "turn_id": "t-1",
                        "session_id": "s-pw",
                        "seq": 1,
                        "message": {"role": "user", "content": "My budget is 3500 EUR."},
                    }
                )
            )
        async with ContextClient.from_settings(secured) as client:  # the password reaches the gateway's client too
            waited = await client.wait_for("s-pw", "t-1", timeout=90)
    finally:
        stop_process(process)
        output = Path(log.name).read_text(errors="replace")
        print(f"--- worker log ---\n{output[-6000:]}")
        log.close()
        Path(log.name).unlink(missing_ok=True)
    assert waited.fresh, "the worker did not write the context to the password-protected Redis"
    assert "Kafka and Redis answer" in output
    for secret in PASSWORDS:
        assert secret not in output
