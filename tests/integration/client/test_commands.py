import os
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from tests.integration.client.fixtures import make_doc
from tests.support.topics import consume
from turnstream.kafka.admin import ensure_topics
from turnstream.redis.writer import ContextWriter
from turnstream.settings import Settings


def turnstream(settings: Settings, *args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "TURNSTREAM_KAFKA_URL": settings.kafka_url or "",
        "TURNSTREAM_REDIS_URL": settings.redis_url or "",
        "TURNSTREAM_TOPIC_PREFIX": settings.topic_prefix,
    }
    result = subprocess.run(
        [sys.executable, "-m", "turnstream", *args], input=stdin, capture_output=True, env=env, timeout=60
    )
    return subprocess.CompletedProcess(result.args, result.returncode, result.stdout.decode(), result.stderr.decode())


def line(turn_id: str, session_id: str = "s1") -> bytes:
    return orjson.dumps(
        {"turn_id": turn_id, "session_id": session_id, "tenant": "acme", "message": {"role": "user", "content": "hi"}}
    )


async def test_produce_sends_valid_lines_and_names_invalid_ones(settings: Settings, tmp_path: Path) -> None:
    await ensure_topics(settings)
    good = [line(f"t{n}") for n in range(3)]
    path = tmp_path / "turns.jsonl"
    path.write_bytes(b"\n".join([good[0], b"{oops", good[1], b"", line("t9", session_id="bad id"), good[2]]) + b"\n")

    result = turnstream(settings, "produce", str(path))

    assert result.returncode == 1
    assert result.stdout == f"produced 3 turns to {settings.turns_topic} (2 invalid lines skipped)\n"
    skipped = [text for text in result.stderr.splitlines() if "skipped" in text]
    assert skipped[0].startswith("turnstream: line 2 skipped: not_json: ")
    assert skipped[1].startswith("turnstream: line 5 skipped: unsafe_session_id: ")
    assert "Traceback" not in result.stderr
    records = await consume(settings, 3)
    assert sorted(record.value for record in records) == sorted(good)  # byte for byte as written
    assert {record.key for record in records} == {b"acme:s1"}


async def test_produce_raw_sends_invalid_lines_too(settings: Settings) -> None:
    await ensure_topics(settings)
    result = turnstream(settings, "produce", "-", "--raw", stdin=line("t1") + b"\n{oops\n")
    assert (result.returncode, result.stdout) == (0, f"produced 2 turns to {settings.turns_topic}\n")
    assert sorted(record.value for record in await consume(settings, 2)) == sorted([line("t1"), b"{oops"])


async def test_context_get_prints_the_document(redis_settings: Settings) -> None:
    store = ContextWriter.from_settings(redis_settings)
    doc = make_doc(3)
    await store.write(doc, ["t3"])
    await store.aclose()
    result = turnstream(redis_settings, "context", "get", "s1", "--tenant", "acme")
    assert result.returncode == 0
    assert orjson.loads(result.stdout) == orjson.loads(doc.to_json())


def test_context_get_of_a_missing_session_exits_1(redis_settings: Settings) -> None:
    result = turnstream(redis_settings, "context", "get", "nobody")
    assert (result.returncode, result.stdout, result.stderr) == (1, "", "turnstream: no context for session nobody\n")


@pytest.mark.parametrize("args", [("produce", "-"), ("context", "get", "s1")])
def test_unconfigured_services_are_one_line(redis_settings: Settings, args: tuple[str, ...]) -> None:
    unset = redis_settings.model_copy(update={"kafka_url": None, "redis_url": None})
    result = turnstream(unset, *args, stdin=b"")
    assert result.returncode == 1
    assert result.stderr.startswith("turnstream: no ") and "turnstream stack" in result.stderr
    assert len(result.stderr.splitlines()) == 1


@pytest.mark.parametrize(("args", "field"), [(("produce", "-"), "kafka_url"), (("context", "get", "s1"), "redis_url")])
def test_unreachable_services_are_one_line(redis_settings: Settings, args: tuple[str, ...], field: str) -> None:
    dead = "kafka://127.0.0.1:1" if field == "kafka_url" else "redis://127.0.0.1:1/0"
    result = turnstream(redis_settings.model_copy(update={field: dead}), *args, stdin=b"")
    assert result.returncode == 1
    assert result.stderr.startswith("turnstream: cannot reach ")
    assert len(result.stderr.splitlines()) == 1
