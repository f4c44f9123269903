"""Trace context on headers, the fields of a log line about a record, dead-letter headers, and spans."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from opentelemetry import trace as otel_trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode

from turnstream.agents.fields import record_fields, sniffed_turn_id
from turnstream.schemas.headers import (
    DETAIL_HEADER,
    REASON_HEADER,
    SOURCE_HEADER,
    carried,
    dead_letter_headers,
    trace_id,
    traceparent,
)
from turnstream.tracing import inject, kafka_attributes, record_span, span

TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
PARENT = f"00-{TRACE}-00f067aa0ba902b7-01"


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ([("traceparent", PARENT.encode())], PARENT),
        ({"traceparent": PARENT.upper().encode()}, PARENT),  # a mapping too, and hex in either case
        ([("Traceparent", PARENT.encode())], PARENT),
        ([("traceparent", b"00-" + b"0" * 32 + b"-00f067aa0ba902b7-01")], None),  # an all-zero trace id is invalid
        ([("traceparent", b"not a trace")], None),
        ([("x-other", PARENT.encode())], None),
        (None, None),
    ],
)
def test_a_valid_traceparent_is_found_in_the_headers(headers: object, expected: str | None) -> None:
    assert traceparent(headers) == expected  # type: ignore[arg-type]
    assert trace_id(headers) == (TRACE if expected else None)  # type: ignore[arg-type]


def test_only_the_trace_context_is_carried_on() -> None:
    headers = [("x-gateway", b"gw-1"), ("traceparent", PARENT.encode()), ("tracestate", b"vendor=1")]
    assert carried(headers) == [("traceparent", PARENT.encode()), ("tracestate", b"vendor=1")]


def test_a_dead_letter_keeps_the_original_headers_and_adds_one_reason() -> None:
    original = [("traceparent", PARENT.encode()), ("x-gateway", b"gw-1"), (REASON_HEADER, b"old reason")]
    headers = dead_letter_headers(original, "invalid_turn", "seq: not an int", "t/3/41")
    assert headers == [
        ("traceparent", PARENT.encode()),
        ("x-gateway", b"gw-1"),
        (REASON_HEADER, b"invalid_turn"),
        (DETAIL_HEADER, b"seq: not an int"),
        (SOURCE_HEADER, b"t/3/41"),
    ]


@dataclass
class Record:
    topic: str = "p.turns"
    partition: int = 3
    offset: int = 41
    key: bytes | None = b"acme:s-7"
    value: bytes | None = b'{"turn_id": "t-9", "seq": "seven"}'
    headers: object = None


@pytest.mark.parametrize(
    ("value", "turn_id"),
    [
        (b'{"turn_id": "t-9"}', "t-9"),
        (b'{"turn_id": 9}', None),
        (b"[1]", None),
        (b"{not json", None),
        (None, None),
    ],
)
def test_the_turn_id_of_a_raw_value_is_read_when_it_has_one(value: bytes | None, turn_id: str | None) -> None:
    assert sniffed_turn_id(value) == turn_id


def test_a_log_line_about_a_record_names_session_turn_partition_offset_and_trace() -> None:
    fields = record_fields(Record(headers=[("traceparent", PARENT.encode())]))
    assert fields == {
        "session": "acme:s-7",
        "turn_id": "t-9",
        "topic": "p.turns",
        "partition": 3,
        "offset": 41,
        "trace_id": TRACE,
    }
    assert record_fields(Record(key=None, value=None), "s-1", "t-1") == {
        "session": "s-1",
        "turn_id": "t-1",
        "topic": "p.turns",
        "partition": 3,
        "offset": 41,
        "trace_id": None,
    }


@pytest.fixture(scope="module")
def exporter() -> InMemorySpanExporter:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    otel_trace.set_tracer_provider(provider)  # once per process: this module is the only one that sets it
    return exporter


@pytest.fixture
def spans(exporter: InMemorySpanExporter) -> Iterator[InMemorySpanExporter]:
    exporter.clear()
    yield exporter


def test_a_recorded_span_joins_the_turn_trace_with_kafka_attributes(spans: InMemorySpanExporter) -> None:
    start = time.perf_counter()
    time.sleep(0.01)
    end = time.perf_counter()
    own = record_span(
        "process p.turns", start, end, PARENT, kafka_attributes("p.turns", 3, 41, b"acme:s-7"), kind="CONSUMER"
    )
    child = record_span("turnstream.decode", start, end, own, error="invalid_turn")
    process, decode = spans.get_finished_spans()
    assert process.name == "process p.turns" and decode.name == "turnstream.decode"
    assert f"{process.context.trace_id:032x}" == TRACE
    assert f"{process.parent.span_id:016x}" == "00f067aa0ba902b7"
    assert decode.parent.span_id == process.context.span_id
    assert (process.kind, decode.kind) == (otel_trace.SpanKind.CONSUMER, otel_trace.SpanKind.INTERNAL)
    assert own == f"00-{TRACE}-{process.context.span_id:016x}-01" and child is not None
    assert dict(process.attributes) == {
        "messaging.system": "kafka",
        "messaging.operation.type": "process",
        "messaging.destination.name": "p.turns",
        "messaging.destination.partition.id": "3",
        "messaging.kafka.offset": 41,
        "messaging.kafka.message.key": "acme:s-7",
    }
    assert 9e6 < process.end_time - process.start_time < 5e8  # the 10 ms that passed, not the time of recording
    assert decode.status.status_code is StatusCode.ERROR and decode.status.description == "invalid_turn"


def test_a_batch_span_links_every_other_traced_turn(spans: InMemorySpanExporter) -> None:
    other = "00-" + "1" * 32 + "-" + "2" * 16 + "-01"
    record_span("turnstream.redis_write", 1.0, 1.001, PARENT, {"db.system": "redis"}, [other])
    (write,) = spans.get_finished_spans()
    assert f"{write.context.trace_id:032x}" == TRACE
    assert [f"{link.context.trace_id:032x}" for link in write.links] == ["1" * 32]


def test_without_a_parent_a_span_starts_its_own_trace(spans: InMemorySpanExporter) -> None:
    record_span("process p.turns", 1.0, 1.001)
    (alone,) = spans.get_finished_spans()
    assert alone.parent is None


def test_a_block_span_nests_under_the_current_span_and_its_context_is_injected(spans: InMemorySpanExporter) -> None:
    with otel_trace.get_tracer("gateway").start_as_current_span("request"):
        with span("turnstream.build_prompt", {"db.system": "redis"}):
            pass
        injected = inject([("x-gateway", b"gw-1")])
        kept = inject([("traceparent", PARENT.encode())])
    prompt, request = spans.get_finished_spans()
    assert prompt.parent.span_id == request.context.span_id
    assert trace_id(injected) == f"{request.context.trace_id:032x}" and injected[0] == ("x-gateway", b"gw-1")
    assert kept == [("traceparent", PARENT.encode())]  # a traceparent given by the caller wins


def test_without_opentelemetry_nothing_imports_it_and_spans_are_no_ops() -> None:
    script = (
        "import sys; sys.modules['opentelemetry'] = None\n"  # as if the otel extra were not installed
        "import turnstream.tracing as t, turnstream.agents.session_agent, turnstream.client, turnstream.commands.worker\n"
        "from turnstream.schemas.headers import trace_id\n"
        "assert not t.recording()\n"
        "assert t.record_span('x', 1.0, 2.0) is None\n"
        "with t.span('y'): pass\n"
        "assert t.inject([]) == []\n"
        "assert trace_id([('traceparent', b'" + PARENT + "')]) == '" + TRACE + "'\n"
        "assert not [m for m, v in sys.modules.items() if m.startswith('opentelemetry') and v is not None]\n"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr


def test_tracing_is_the_only_module_that_imports_opentelemetry() -> None:
    package = Path(__file__).parents[2] / "turnstream"
    importing = sorted(
        str(path.relative_to(package))
        for path in package.rglob("*.py")
        if "import opentelemetry" in (text := path.read_text()) or "from opentelemetry" in text
    )
    assert importing == ["tracing.py"]


def test_with_the_api_but_no_sdk_provider_set_spans_are_skipped() -> None:
    script = (
        "import turnstream.tracing as t\n"
        "assert t.otel_trace is not None and not t.recording()\n"  # tens of microseconds a record saved
        "assert t.record_span('x', 1.0, 2.0, '" + PARENT + "') is None\n"
        "assert t.inject([]) == []\n"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
