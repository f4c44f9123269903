"""Reading OpenAI chat messages: the one `Message` type, the text of a content value, the tool calls.

The readers are tolerant: strategies may be handed shapes no validator has seen, and must not raise.
On a validated message (compaction/messages.py) they read exactly what the message says.
"""

from __future__ import annotations

from typing import Any

import orjson

Message = dict[str, Any]
"""One OpenAI chat message, kept as the caller's own dict so unchanged messages stay byte-identical."""


def content_text(content: Any) -> str:
    """The text a message `content` carries.

    A string is itself; a list of parts gives its text parts joined by line breaks (other parts, such as
    images, carry no text). Tolerated besides: None (""), untyped {"text": …} objects and bare values in a
    part list, and any other content as its JSON.
    """
    if isinstance(content, str):
        return content
    if content is None:
        return ""
    if isinstance(content, list):
        return "\n".join(text for text in map(_part_text, content) if text is not None)
    try:
        return orjson.dumps(content).decode()
    except TypeError:
        return str(content)


def _part_text(part: Any) -> str | None:
    """The text of one content part; None for a part that carries none."""
    if isinstance(part, dict):
        if part.get("type", "text") != "text" or part.get("text") is None:
            return None
        text = part["text"]
        return text if isinstance(text, str) else str(text)
    return None if part is None else str(part)


def tool_calls(message: Any) -> list[tuple[str, str, str]]:
    """(id, function name, arguments) of every tool call an assistant message makes; empty for any other.

    Bad shapes are skipped or read as far as they go (a call without a function is named "tool").
    """
    raw = message.get("tool_calls") if isinstance(message, dict) else None
    if not isinstance(raw, list):
        return []
    calls: list[tuple[str, str, str]] = []
    for call in raw:
        if not isinstance(call, dict):
            continue
        function = call.get("function")
        if not isinstance(function, dict):
            function = {}
        calls.append(
            (str(call.get("id", "")), str(function.get("name", "tool")), content_text(function.get("arguments", "")))
        )
    return calls


def call_ids(message: Any) -> tuple[str, ...]:
    """Ids of the tool calls a message makes (`tool_calls`' first column); empty for any other message."""
    return tuple(call_id for call_id, _, _ in tool_calls(message))


def message_text(message: Any) -> str:
    """Everything searchable in one message: its content and its tool calls."""
    if not isinstance(message, dict):
        return content_text(message)
    parts = [content_text(message.get("content"))]
    parts += [f"{name}({args})" for _, name, args in tool_calls(message)]
    return "\n".join(p for p in parts if p)
