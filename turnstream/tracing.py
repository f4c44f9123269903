"""W3C trace context on Kafka headers, and OpenTelemetry spans when the `otel` extra is installed.

The only module that imports opentelemetry: without the extra, or with no SDK tracer provider set, every
span helper is a no-op, while the `traceparent` header is still carried to what the worker produces for a
turn and its trace id still appears in the worker's log lines (both need no OpenTelemetry).
"""

from __future__ import annotations

import logging
import os
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from turnstream.schemas.headers import TRACEPARENT, traceparent

try:
    from opentelemetry import context as otel_context
    from opentelemetry import trace as otel_trace
    from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator
except ImportError:  # the otel extra is not installed: spans are no-ops
    otel_trace = None  # type: ignore[assignment]  # the module, or None without the otel extra

TRACER_NAME = "turnstream"
log = logging.getLogger(__name__)
EXPORTER_ENV = "OTEL_TRACES_EXPORTER"


def recording() -> bool:
    """Whether spans go anywhere: the otel extra is installed and an SDK tracer provider is set. Without one
    the API's spans are no-ops that still cost tens of microseconds per record, so callers skip them."""
    if otel_trace is None:
        return False
    return not isinstance(
        otel_trace.get_tracer_provider(), (otel_trace.ProxyTracerProvider, otel_trace.NoOpTracerProvider)
    )


def kafka_attributes(topic: str, partition: int, offset: int, key: bytes | None) -> dict[str, Any]:
    """OpenTelemetry messaging attributes of a consumed Kafka record."""
    attributes: dict[str, Any] = {
        "messaging.system": "kafka",
        "messaging.operation.type": "process",
        "messaging.destination.name": topic,
        "messaging.destination.partition.id": str(partition),
        "messaging.kafka.offset": offset,
    }
    if key is not None:
        attributes["messaging.kafka.message.key"] = key.decode("utf-8", "replace")
    return attributes


def _context(parent: str | None) -> Any:
    return TraceContextTextMapPropagator().extract({TRACEPARENT: parent}) if parent else None


def _epoch_ns(perf: float) -> int:
    """A time.perf_counter() reading as epoch nanoseconds (what spans are stamped with)."""
    return time.time_ns() - int((time.perf_counter() - perf) * 1e9)


def record_span(
    name: str,
    start: float,
    end: float,
    parent: str | None = None,
    attributes: Mapping[str, Any] | None = None,
    links: Sequence[str] = (),
    error: str | None = None,
    kind: str = "INTERNAL",
) -> str | None:
    """Record a finished span that ran from `start` to `end` (time.perf_counter() readings), as a child of
    the `parent` traceparent (else a new trace), linked to the `links` traceparents; `kind` names a SpanKind
    (CONSUMER for processing a record, CLIENT for a call out). Returns the span's own
    traceparent, to parent further spans on; None without OpenTelemetry or with no SDK recording spans."""
    if not recording():
        return None
    tracer = otel_trace.get_tracer(TRACER_NAME)
    span_links = [otel_trace.Link(otel_trace.get_current_span(_context(link)).get_span_context()) for link in links]
    span = tracer.start_span(
        name,
        context=_context(parent),
        kind=otel_trace.SpanKind[kind],
        attributes=dict(attributes or {}),
        links=span_links,
        start_time=_epoch_ns(start),
    )
    if error is not None:
        span.set_status(otel_trace.Status(otel_trace.StatusCode.ERROR, error))
    span.end(end_time=_epoch_ns(end))
    own = span.get_span_context()
    return f"00-{own.trace_id:032x}-{own.span_id:016x}-{own.trace_flags:02x}" if own.is_valid else None


@contextmanager
def span(name: str, attributes: Mapping[str, Any] | None = None) -> Iterator[None]:
    """A span around a block, a child of the caller's current span (a gateway's request, say)."""
    if not recording():
        yield
        return
    with otel_trace.get_tracer(TRACER_NAME).start_as_current_span(name, attributes=dict(attributes or {})):
        yield


def inject(headers: list[tuple[str, bytes]]) -> list[tuple[str, bytes]]:
    """`headers` plus the caller's current trace context, unless they carry a traceparent already."""
    if not recording() or traceparent(headers):
        return headers
    carrier: dict[str, str] = {}
    TraceContextTextMapPropagator().inject(carrier, otel_context.get_current())
    return headers + [(name, value.encode()) for name, value in carrier.items()]


def export_from_env() -> None:
    """With OTEL_TRACES_EXPORTER=console and opentelemetry-sdk installed, print every span as one JSON line on
    stdout. Any other exporter is set up by OpenTelemetry's own launcher (`opentelemetry-instrument`)."""
    if otel_trace is None or os.environ.get(EXPORTER_ENV, "").strip().lower() != "console":
        return
    try:
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import ConsoleSpanExporter, SimpleSpanProcessor
    except ImportError:
        log.warning("%s=console needs opentelemetry-sdk installed; no spans are printed", EXPORTER_ENV)
        return
    if sys.__stdout__ is None:  # an interpreter started without one (pythonw)
        log.warning("%s=console needs a standard output; no spans are printed", EXPORTER_ENV)
        return
    provider = TracerProvider()
    exporter = ConsoleSpanExporter(out=sys.__stdout__, formatter=lambda span: span.to_json(indent=None) + "\n")
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    otel_trace.set_tracer_provider(provider)
