"""JSON Schema of one OpenAI chat message: the published form of `compaction.messages.shape_error`.

Two rules are not expressible in JSON Schema and are checked only by the decoder: tool call ids
unique within a message, and a tool result answering a call that is still open.
"""

from __future__ import annotations

from typing import Any

_NONEMPTY = {"type": "string", "minLength": 1}

_TOOL_CALL: dict[str, Any] = {
    "type": "object",
    "required": ["id", "function"],
    "properties": {
        "id": _NONEMPTY,
        "type": {"const": "function"},
        "function": {
            "type": "object",
            "required": ["name", "arguments"],
            "properties": {
                "name": _NONEMPTY,
                "arguments": {"type": "string", "description": "The call's arguments as JSON text."},
            },
        },
    },
}

_CONTENT_PART: dict[str, Any] = {
    "type": "object",
    "required": ["type"],
    "properties": {"type": _NONEMPTY},
    "if": {"properties": {"type": {"const": "text"}}},
    "then": {"required": ["text"], "properties": {"text": {"type": "string"}}},
}

_HAS_CALLS: dict[str, Any] = {"required": ["tool_calls"], "properties": {"tool_calls": {"type": "array", "minItems": 1}}}

MESSAGE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "title": "Message",
    "description": "One OpenAI chat message, carried byte-identical from the gateway to the context.",
    "required": ["role"],
    "properties": {
        "role": {"enum": ["system", "user", "assistant", "tool"]},
        "content": {
            "anyOf": [{"type": "string"}, {"type": "array", "items": _CONTENT_PART}, {"type": "null"}],
            "description": "Text, or a list of parts; null or absent only on an assistant message with tool_calls.",
        },
        "tool_calls": {"anyOf": [{"type": "array", "items": _TOOL_CALL}, {"type": "null"}]},
        "tool_call_id": {**_NONEMPTY, "description": "The call a tool message answers; required on role tool."},
    },
    "allOf": [
        {"if": _HAS_CALLS, "then": {"properties": {"role": {"const": "assistant"}}}},
        {
            "if": {"not": {"required": ["content"], "properties": {"content": {"type": ["string", "array"]}}}},
            "then": {**_HAS_CALLS, "properties": {**_HAS_CALLS["properties"], "role": {"const": "assistant"}}},
        },
        {"if": {"properties": {"role": {"const": "tool"}}}, "then": {"required": ["tool_call_id"]}},
    ],
}
