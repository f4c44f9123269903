"""Every applied turn condensed to its archive entry (schemas/archive.py), with its dates pinned (pure)."""

from __future__ import annotations

from typing import Any

from turnstream.schemas.archive import ArchiveEntry, entry_id, index_terms
from turnstream.text.chat import content_text, tool_calls
from turnstream.text.dates import date_notes
from turnstream.text.language import Language
from turnstream.text.prose import shorten

TEXT_CHARS = 1000
"""Text kept per archived turn: a recalled line says what the turn said, not all of a long answer."""
TOOL_RESULT_CHARS = 12_000
"""Text kept per archived tool result, on one line: the result whole, as an agent reads it again instead of calling
the tool again, up to about the recall tool's largest budget (4,000 tokens); only a larger one is cut."""
ARGUMENT_CHARS = 200


def archive_text(message: dict[str, Any], call: dict[str, Any] | None = None) -> str:
    """A message as one searchable text: its words, the tools it called, or which call a result answers.

    `call` is the assistant message whose tool call a tool result answers (its name and arguments
    make the result findable by what was asked).
    """
    text = content_text(message.get("content"))
    if message.get("role") == "tool":
        called = next(
            (
                f"{name}({shorten(args, ARGUMENT_CHARS)})"
                for id_, name, args in tool_calls(call or {})
                if id_ == message.get("tool_call_id")
            ),
            "tool",
        )
        return f"{called} → {shorten(text, TOOL_RESULT_CHARS)}"
    calls = [f"{name}({shorten(args, ARGUMENT_CHARS)})" for _, name, args in tool_calls(message)]
    return shorten(" ".join([text, *(f"→ {c}" for c in calls)]).strip(), TEXT_CHARS)


def archive_entry(
    session: str,
    turn_id: str,
    position: int,
    message: dict[str, Any],
    ts: float,
    call: dict[str, Any] | None = None,
    language: Language | None = None,
) -> ArchiveEntry | None:
    """The archive entry of one applied turn; None for a system message (the anchors keep those) or no text.

    With the conversation's `language`, its relative dates are pinned now, once, rather than on every read.
    """
    if message.get("role") == "system":
        return None
    text = archive_text(message, call)
    if not text:
        return None
    speaker = message.get("name") if isinstance(message.get("name"), str) else None
    dates = None if language is None else date_notes(text, ts, language)
    return ArchiveEntry(
        entry_id(session, turn_id),
        session,
        position,
        message["role"],
        speaker,
        ts,
        text,
        dates,
        index_terms(speaker, text),
    )
