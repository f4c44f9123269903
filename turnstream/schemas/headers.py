"""The Kafka headers turnstream writes on the records it produces (dead letters, forwarded and reordered turns)."""

from __future__ import annotations

REASON_HEADER = "x-turnstream-reason"
"""On a record a worker produced (a dead letter, a forwarded turn): why."""
DETAIL_HEADER = "x-turnstream-detail"
SOURCE_HEADER = "x-turnstream-source"
"""`topic/partition/offset` of the original record."""
OWN_HEADERS = (REASON_HEADER, DETAIL_HEADER, SOURCE_HEADER)
ORIGINAL_KEY_HEADER = "x-turnstream-original-key"
"""On a forwarded turn: the key it arrived with (absent when it had none)."""

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
