"""`turnstream demo` end to end on the test services: its report agrees with what is in Redis."""

from __future__ import annotations

import os
import subprocess
import sys

import orjson
import pytest

from tests.support.services import on_tansu
from turnstream.client import ContextClient
from turnstream.settings import Settings
from turnstream.stack.services import free_port
from turnstream.text.tokens import count_messages
from turnstream_tools.demo.plan import plan_sessions


def run_demo(*args: str, env: dict[str, str], timeout: float = 240) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "turnstream", "demo", *args],
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        timeout=timeout,
    )


@on_tansu  # the demo of the embedded default
async def test_the_report_matches_the_contexts_in_redis(settings: Settings) -> None:
    env = {
        "TURNSTREAM_KAFKA_URL": settings.kafka_url,
        "TURNSTREAM_REDIS_URL": settings.redis_url,
        "TURNSTREAM_TOPIC_PREFIX": settings.topic_prefix,
    }
    result = run_demo("--sessions", "2", "--turns", "40", "--json", env=env)
    assert result.returncode == 0, result.stderr[-3000:]
    report = orjson.loads(result.stdout)
    plan = plan_sessions(2, 40)
    assert [row["session_id"] for row in report["sessions"]] == [s.session_id for s in plan]
    assert report["turns"] == sum(len(s.sample.messages) for s in plan) == 80
    async with ContextClient.from_settings(
        settings.model_copy(update={"budget_tokens": report["budget_tokens"]})
    ) as client:
        for row, session in zip(report["sessions"], plan):
            doc = await client.get(row["session_id"])
            assert doc is not None
            assert doc.version == row["version"] == row["turns"] == 40
            assert doc.tokens.after == row["compacted_tokens"] <= report["budget_tokens"]
            assert doc.dropped == row["dropped"]
            assert [{"type": f.type, "text": f.text} for f in doc.facts] == row["facts"]
            assert row["naive_tokens"] == count_messages(session.sample.messages)
            assert row["ratio"] == round(row["naive_tokens"] / row["compacted_tokens"], 2)
    prompt = report["prompt"]
    assert prompt["messages"][-1] == {"role": "user", "content": prompt["user_text"]}
    assert set(report["latency_ms"]) >= {
        "broker_wait",
        "ingest",
        "compaction",
        "redis_write",
        "read_get",
        "read_build_prompt",
    }
    assert all(0 <= figures["p50"] <= figures["p99"] for figures in report["latency_ms"].values())
    assert report["throughput_turns_per_s"] == pytest.approx(report["turns"] / report["elapsed_seconds"])


@pytest.mark.parametrize(
    ("args", "env", "message"),
    [
        (["--sessions", "0"], {}, "argument --sessions: must be at least 1, got 0"),
        (["--turns", "many"], {}, "argument --turns: not a whole number: 'many'"),
    ],
)
def test_bad_arguments_are_one_line(args: list[str], env: dict[str, str], message: str) -> None:
    result = run_demo(*args, env=env, timeout=60)
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [f"turnstream demo: error: {message} (see --help)"]


def test_an_unreachable_broker_is_one_line(redis_url: str) -> None:
    env = {"TURNSTREAM_KAFKA_URL": f"kafka://127.0.0.1:{free_port()}", "TURNSTREAM_REDIS_URL": redis_url}
    result = run_demo("--sessions", "1", env=env, timeout=120)
    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("turnstream: cannot reach the broker at kafka://127.0.0.1:"), (
        result.stderr
    )
