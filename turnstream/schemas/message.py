"""One OpenAI chat message, the contract every turn carries: `shape_error`, the rule a message alone must meet,
and its published form, the JSON Schema.

Two rules are not expressible in JSON Schema and are checked only by the decoder: tool call ids
unique within a message, and a tool result answering a call that is still open (compaction/messages.py).
"""

from __future__ import annotations

from typing import Any

ROLES = ("system", "user", "assistant", "tool")


def _check_parts(parts: list[Any]) -> str | None:
    for number, part in enumerate(parts):
        if not isinstance(part, dict) or not isinstance(part.get("type"), str) or not part["type"]:
            return f"content part {number} is not an object with a string 'type'"
        if part["type"] == "text" and not isinstance(part.get("text"), str):
            return f"content part {number} has type 'text' but no string 'text'"
    return None


def _check_tool_calls(calls: Any) -> str | None:
    if not isinstance(calls, list):
        return "tool_calls must be a list"
    seen: set[str] = set()
    for number, call in enumerate(calls):
        if not isinstance(call, dict):
            return f"tool_calls[{number}] is not an object"
        call_id = call.get("id")
        if not isinstance(call_id, str) or not call_id:
            return f"tool_calls[{number}] has no string 'id'"
        if call_id in seen:
            return f"tool_calls[{number}] repeats id {call_id!r}"
        seen.add(call_id)
        if call.get("type", "function") != "function":
            return f"tool_calls[{number}] has type {call.get('type')!r}, expected 'function'"
        function = call.get("function")
        if not isinstance(function, dict):
            return f"tool_calls[{number}] has no 'function' object"
        if not isinstance(function.get("name"), str) or not function["name"]:
            return f"tool_calls[{number}].function has no string 'name'"
        if not isinstance(function.get("arguments"), str):
            return f"tool_calls[{number}].function.arguments must be a string (JSON text)"
    return None


MAX_DEPTH = 32
"""Deepest nesting a message may have: deeper would fail to serialise once inside a context document."""


def _depth(value: Any, limit: int) -> int:
    """Nesting depth of `value`, counted no further than `limit` + 1."""
    if limit < 0 or not isinstance(value, (dict, list)):
        return 0
    children = value.values() if isinstance(value, dict) else value
    # only containers nest: the strings and numbers of a message are not visited one call each
    return 1 + max((_depth(child, limit - 1) for child in children if isinstance(child, (dict, list))), default=0)


def shape_error(message: Any) -> str | None:
    """Why `message` alone is not a valid chat message, or None when it is."""
    if not isinstance(message, dict):
        return f"expected an object, got {type(message).__name__}"
    if _depth(message, MAX_DEPTH) > MAX_DEPTH:
        return f"nested more than {MAX_DEPTH} levels deep"
    role = message.get("role")
    if role is None:
        return "missing role"
    if not isinstance(role, str):
        return f"role must be a string, got {type(role).__name__}"
    if not role:
        return "empty role"
    if role not in ROLES:
        return f"unknown role {role!r} (expected system, user, assistant or tool)"
    calls = message.get("tool_calls")
    if calls is not None and calls != []:
        if role != "assistant":
            return f"only assistant messages carry tool_calls, not {role}"
        if problem := _check_tool_calls(calls):
            return problem
    content = message.get("content")
    if isinstance(content, list):
        # OpenAI's list-of-parts form (text, image_url, ...) is valid input for every role.
        if problem := _check_parts(content):
            return problem
    elif content is None:
        if role != "assistant" or not calls:
            return "content is missing (only an assistant message with tool_calls may omit it)"
    elif not isinstance(content, str):
        return f"content must be a string or a list of parts, got {type(content).__name__}"
    if role == "tool":
        call_id = message.get("tool_call_id")
        if not isinstance(call_id, str) or not call_id:
            return "tool message has no string tool_call_id"
    return None


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

_HAS_CALLS: dict[str, Any] = {
    "required": ["tool_calls"],
    "properties": {"tool_calls": {"type": "array", "minItems": 1}},
}

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
