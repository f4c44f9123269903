"""The Kafka headers turnstream writes on the records it produces (dead letters, forwarded and reordered turns)."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

REASON_HEADER = "x-turnstream-reason"
"""On a record a worker produced (a dead letter, a forwarded turn): why."""
DETAIL_HEADER = "x-turnstream-detail"
SOURCE_HEADER = "x-turnstream-source"
"""`topic/partition/offset` of the original record."""
OWN_HEADERS = (REASON_HEADER, DETAIL_HEADER, SOURCE_HEADER)
ORIGINAL_KEY_HEADER = "x-turnstream-original-key"
"""On a forwarded turn: the key it arrived with (absent when it had none)."""

Headers = Mapping[str, bytes] | Sequence[tuple[str, bytes]] | None
"""Kafka headers as aiokafka and Faust hand them over: a list of (name, value) pairs, or a mapping."""


def header_items(headers: Headers) -> list[tuple[str, bytes]]:
    """`headers` as a list of (name, value) pairs, in order."""
    if not headers:
        return []
    pairs = headers.items() if isinstance(headers, Mapping) else headers
    return [(name, value) for name, value in pairs]


MEANINGS: dict[str, str] = {
    REASON_HEADER: "why: a dead letter's refusal (`schema`, `not_json`, `oversize`, `invalid_utf8`, …), or a forwarded "
    "turn's `null_key` / `wrong_key` / `reordered`",
    DETAIL_HEADER: "on a dead letter: what is wrong, in words (at most 1,024 bytes)",
    SOURCE_HEADER: "`topic/partition/offset` of the original record",
    ORIGINAL_KEY_HEADER: "on a forwarded turn: the key it arrived with (absent when it had none)",
}
"""What each header turnstream writes says: docs/protocol.md's header table (schemas/protocol_doc.py)."""


def dead_letter_headers(
    original: list[tuple[str, bytes]], reason: str, detail: str, source: str
) -> list[tuple[str, bytes]]:
    """The original record's headers (its traceparent among them), then why it was refused. A record that was
    dead-lettered before loses its old reason headers, so a dead letter never carries two reasons."""
    kept = [(name, value) for name, value in original if name not in OWN_HEADERS]
    return kept + [
        (REASON_HEADER, reason.encode()),
        (DETAIL_HEADER, detail.encode()[:1024]),
        (SOURCE_HEADER, source.encode()),
    ]


TRACEPARENT = "traceparent"
"""The W3C trace-context header (https://www.w3.org/TR/trace-context/): read here without OpenTelemetry."""
TRACE_HEADERS = (TRACEPARENT, "tracestate")
"""The W3C trace-context headers the worker carries from a turn to what it produces for it."""
_TRACEPARENT = re.compile(r"^[0-9a-f]{2}-(?P<trace>[0-9a-f]{32})-(?P<span>[0-9a-f]{16})-[0-9a-f]{2}$")


def traceparent(headers: Headers) -> str | None:
    """The record's `traceparent` header when it is a valid W3C one (an all-zero trace id is not)."""
    for name, value in header_items(headers):
        if name.lower() == TRACEPARENT and value:
            text = value.decode("ascii", "replace").strip().lower()
            match = _TRACEPARENT.match(text)
            if match and match["trace"] != "0" * 32 and match["span"] != "0" * 16:
                return text
    return None


def trace_id(headers: Headers) -> str | None:
    """The 32-hex-digit trace id of the record's `traceparent`, for log lines."""
    return trace_id_of(traceparent(headers))


def trace_id_of(parent: str | None) -> str | None:
    """The trace id of a valid traceparent (as `traceparent` returns it)."""
    return parent.split("-")[1] if parent else None


def carried(headers: Headers) -> list[tuple[str, bytes]]:
    """The trace-context headers of a record, to put on every record produced for it."""
    return [(name, value) for name, value in header_items(headers) if name.lower() in TRACE_HEADERS]
