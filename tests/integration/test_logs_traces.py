"""A worker with TURNSTREAM_LOG_FORMAT=json: every line on stderr is a JSON object, the dead-letter line names its
record, a turn's traceparent follows it into the dead letter, the log lines and the spans (console exporter)."""

from __future__ import annotations

import json
from typing import Any

import orjson
import pytest

from tests.support.conversations import turns_for
from tests.support.llm_pipeline import llm_settings
from tests.support.pipeline import read_dead_letters, read_topic, wait_for_versions
from tests.support.worker import running_worker
from turnstream.client import ContextClient, TurnProducer
from turnstream.kafka.admin import ensure_topics
from turnstream.schemas.headers import REASON_HEADER, SOURCE_HEADER
from turnstream.settings import Settings

pytestmark = pytest.mark.integration

GOOD_TRACE = "0af7651916cd43dd8448eb211c80319c"
BAD_TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"


def traceparent(trace: str) -> bytes:
    return f"00-{trace}-b7ad6b7169203331-01".encode()


def parsed(log: str) -> list[dict[str, Any]]:
    """Every line of the worker's output as JSON: a line that is not JSON fails the test."""
    return [json.loads(line) for line in log.splitlines() if line.strip()]


async def test_json_logs_and_a_traceparent_follow_a_turn_to_its_dead_letter_and_spans(
    settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = settings.model_copy(update={"log_format": "json", "turn_partitions": 2})
    monkeypatch.setenv("OTEL_TRACES_EXPORTER", "console")  # the worker prints its spans as JSON lines on stdout
    good = turns_for("traced", seed=5, count=1)[0]
    bad = {**good, "session_id": "broken", "turn_id": "bad-1", "seq": "seven"}  # wrong type: refused
    await ensure_topics(settings)
    with running_worker(settings) as worker:
        async with TurnProducer(settings) as producer:
            await producer.send_raw(
                b"broken", orjson.dumps(bad), {"traceparent": traceparent(BAD_TRACE), "x-gateway": b"gw-1"}
            )
            await producer.send_raw(b"broken", None, {"traceparent": traceparent(BAD_TRACE)})  # a tombstone
            await producer.send(good, headers=[("traceparent", traceparent(GOOD_TRACE))])
            await producer.flush()
        async with ContextClient.from_settings(settings) as client:
            assert await client.wait_for("traced", good["turn_id"], timeout=60, user_id=good.get("user_id"))
        (dead,) = await read_dead_letters(settings, 1)
        lines = parsed(worker.log())

    headers = dict(dead.headers)
    assert headers["traceparent"] == traceparent(BAD_TRACE) and headers["x-gateway"] == b"gw-1"
    assert headers[REASON_HEADER] == b"schema"
    source_partition, source_offset = headers[SOURCE_HEADER].decode().split("/")[-2:]

    logs = [line for line in lines if "level" in line]
    spans = [line for line in lines if "context" in line]
    assert any(line["logger"].startswith("faust.") for line in logs)  # Faust's own lines are JSON too
    (dead_line,) = [line for line in logs if line["message"].startswith("dead-lettered")]
    assert dead_line["level"] == "WARNING"
    assert {k: dead_line[k] for k in ("session", "turn_id", "partition", "offset", "trace_id")} == {
        "session": "broken",
        "turn_id": "bad-1",
        "partition": int(source_partition),
        "offset": int(source_offset),
        "trace_id": BAD_TRACE,
    }
    (tombstone,) = [line for line in logs if "tombstone" in line["message"]]
    assert {k: tombstone[k] for k in ("session", "turn_id", "partition", "offset", "trace_id")} == {
        "session": "broken",
        "turn_id": None,
        "partition": int(source_partition),
        "offset": int(source_offset) + 1,
        "trace_id": BAD_TRACE,
    }

    by_trace: dict[str, set[str]] = {}
    for span in spans:
        by_trace.setdefault(span["context"]["trace_id"].removeprefix("0x"), set()).add(span["name"])
    topic = settings.turns_topic
    assert by_trace[GOOD_TRACE] >= {
        f"process {topic}",
        "turnstream.decode",
        "turnstream.compaction",
        "turnstream.redis_write",
    }
    assert by_trace[BAD_TRACE] == {f"process {topic}", "turnstream.decode"}
    (process,) = [s for s in spans if s["name"] == f"process {topic}" and BAD_TRACE in s["context"]["trace_id"]]
    assert process["attributes"]["messaging.system"] == "kafka"
    assert process["attributes"]["messaging.kafka.message.key"] == "broken"
    assert process["attributes"]["messaging.kafka.offset"] == int(source_offset)
    assert process["status"]["status_code"] == "ERROR"


async def test_summary_requests_and_answers_carry_the_traceparent_of_their_turn(settings: Settings, llm_server) -> None:
    settings = llm_settings(settings, llm_server())
    turns = turns_for("sum", seed=3, count=60)
    parents = {traceparent(f"{i + 1:032x}") for i in range(len(turns))}  # one trace per turn
    await ensure_topics(settings)
    with running_worker(settings) as worker:
        async with TurnProducer(settings) as producer:
            for i, turn in enumerate(turns):
                await producer.send(turn, headers={"traceparent": traceparent(f"{i + 1:032x}")})
            await producer.flush()
        async with ContextClient.from_settings(settings) as client:
            await wait_for_versions(client, {"sum": len(turns)}, worker)
        requests = await read_topic(settings, settings.compaction_topic, 1)
        answers = await read_topic(settings, settings.summaries_topic, len(requests))
    assert requests, "a 1,200-token budget drops spans: the summarizer must have been asked"
    assert answers
    for record in requests + answers:
        assert dict(record.headers)["traceparent"] in parents
    # an answer goes back under the trace of the request it answers
    assert {dict(r.headers)["traceparent"] for r in answers} <= {dict(r.headers)["traceparent"] for r in requests}
