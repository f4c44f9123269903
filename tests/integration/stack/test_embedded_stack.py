import os
import signal
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path

import orjson
import pytest
import redis
import redis.asyncio as aioredis
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer

from tests.support.services import assert_sigterm_stops, killed_on_failure, on_each_broker, port_of
from turnstream.settings import parse_kafka_url
from turnstream.stack.services import free_port, kafka_answers, redis_answers


@on_each_broker
async def test_broker_round_trips_keyed_messages(kafka_url: str) -> None:
    servers = parse_kafka_url(kafka_url)
    topic = f"roundtrip-{uuid.uuid4().hex[:8]}"
    producer = AIOKafkaProducer(bootstrap_servers=servers, acks="all")
    await producer.start()
    try:
        for i in range(20):
            await producer.send_and_wait(topic, f"value-{i}".encode(), key=f"session-{i % 3}".encode())
    finally:
        await producer.stop()
    consumer = AIOKafkaConsumer(topic, bootstrap_servers=servers, auto_offset_reset="earliest", group_id=f"g-{topic}")
    await consumer.start()
    try:
        seen: list[tuple[bytes, bytes, int]] = []
        deadline = time.monotonic() + 30
        while len(seen) < 20 and time.monotonic() < deadline:
            batch = await consumer.getmany(timeout_ms=500)
            seen += [(r.key, r.value, r.partition) for records in batch.values() for r in records]
    finally:
        await consumer.stop()
    assert sorted(v for _, v, _ in seen) == sorted(f"value-{i}".encode() for i in range(20))
    partitions_of: dict[bytes, set[int]] = {}
    for key, _, partition in seen:
        partitions_of.setdefault(key, set()).add(partition)
    # one key, one partition: the property per-session ordering rests on
    assert len(partitions_of) == 3 and all(len(p) == 1 for p in partitions_of.values())


async def test_redis_round_trips_a_value(redis_url: str) -> None:
    client = aioredis.from_url(redis_url)
    try:
        key = f"roundtrip:{uuid.uuid4().hex}"
        await client.set(key, "∑ value", ex=60)
        assert (await client.get(key)).decode() == "∑ value"
    finally:
        await client.aclose()


def _start_stack(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "turnstream", "stack", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


@pytest.mark.parametrize("broker_args", [[], ["--broker", "kafka"]], ids=["tansu", "kafka"])
def test_stack_command_prints_urls_then_ready_and_stops_on_sigterm(broker_args: list[str]) -> None:
    with killed_on_failure(_start_stack(*broker_args)) as process:
        started = time.monotonic()
        lines = [process.stdout.readline().strip() for _ in range(3)]
        assert time.monotonic() - started < 60, process.stderr.read()
        assert lines[0].startswith("KAFKA_URL=kafka://127.0.0.1:")
        assert lines[1].startswith("REDIS_URL=redis://127.0.0.1:")
        assert lines[2] == "READY"
        broker_pids = _children(process.pid)
        assert broker_pids, "the stack started no child process"
        assert_sigterm_stops(process, port_of(lines[0]), port_of(lines[1]), within=20)
        assert not [pid for pid in broker_pids if Path(f"/proc/{pid}").exists()], "a service outlived the stack"


def test_stack_on_apache_kafka_takes_the_ports_asked_for_and_round_trips(tmp_path: Path) -> None:
    kafka_port, redis_port = free_port(), free_port()
    with killed_on_failure(
        _start_stack("--broker", "kafka", "--kafka-port", str(kafka_port), "--redis-port", str(redis_port))
    ) as process:
        lines = [process.stdout.readline().strip() for _ in range(3)]
        assert lines == [
            f"KAFKA_URL=kafka://127.0.0.1:{kafka_port}",
            f"REDIS_URL=redis://127.0.0.1:{redis_port}/0",
            "READY",
        ]
        turn = {
            "turn_id": "t1",
            "session_id": "s1",
            "seq": 1,
            "ts": 1.0,
            "message": {"role": "user", "content": "hello"},
        }
        produced = subprocess.run(
            [sys.executable, "-m", "turnstream", "produce", "-"],
            input=orjson.dumps(turn).decode() + "\n",
            capture_output=True,
            text=True,
            timeout=60,
            env={
                **os.environ,
                "TURNSTREAM_KAFKA_URL": f"kafka://127.0.0.1:{kafka_port}",
                "TURNSTREAM_TOPIC_PREFIX": "stack-kafka",
            },
        )
        assert produced.returncode == 0, produced.stderr
        assert_sigterm_stops(process, kafka_port, redis_port, within=20)


def test_stack_on_apache_kafka_without_its_jars_is_one_line(tmp_path: Path) -> None:
    process = subprocess.run(
        [sys.executable, "-m", "turnstream", "stack", "--broker", "kafka"],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "TURNSTREAM_KAFKA_JARS": str(tmp_path)},
    )
    assert process.returncode == 1
    lines = process.stderr.strip().splitlines()
    assert len(lines) == 1 and "make kafka" in lines[0] and str(tmp_path) in lines[0], lines


def test_stack_on_apache_kafka_without_java_is_one_line(tmp_path: Path) -> None:
    process = subprocess.run(
        [sys.executable, "-m", "turnstream", "stack", "--broker", "kafka"],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PATH": str(tmp_path)},  # nothing on PATH, java included
    )
    assert process.returncode == 1
    lines = process.stderr.strip().splitlines()
    assert len(lines) == 1 and "no `java` on PATH" in lines[0], lines


def _children(pid: int) -> list[int]:
    """Process ids whose parent is `pid` (read from /proc)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            found.append(int(stat.parent.name))
    return found


def test_stack_refuses_a_port_in_use_in_one_line() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        process = _start_stack("--redis-port", str(port))
        _, err = process.communicate(timeout=30)
    assert process.returncode == 1
    assert err.strip().splitlines() == [f"turnstream: port {port} is already in use (Address already in use)"]


def test_stack_restarts_a_killed_redis_server_on_the_same_port_and_keeps_the_broker() -> None:
    with killed_on_failure(_start_stack()) as process:
        kafka_line, redis_line, ready = (process.stdout.readline().strip() for _ in range(3))
        assert ready == "READY"
        kafka_port, redis_port = port_of(kafka_line), port_of(redis_line)
        first = redis.Redis(port=redis_port).info("server")["process_id"]
        os.kill(first, signal.SIGKILL)  # the stack's own child, by its pid
        deadline = time.monotonic() + 20
        while not redis_answers(redis_port):
            assert process.poll() is None, f"the stack exited: {process.stderr.read()}"
            assert time.monotonic() < deadline, "redis-server did not come back"
            time.sleep(0.1)
        assert redis.Redis(port=redis_port).info("server")["process_id"] != first
        assert kafka_answers(kafka_port) and process.poll() is None
        assert_sigterm_stops(process, kafka_port, redis_port, within=10)
