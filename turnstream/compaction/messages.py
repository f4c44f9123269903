"""Validation of OpenAI chat messages, one at a time, against the tool calls still waiting for results."""

from __future__ import annotations

from typing import Any, Iterable, Sequence

from turnstream.text.chat import call_ids

ROLES = ("system", "user", "assistant", "tool")


class MessageError(ValueError):
    """A message the compactor cannot accept; `index` is its position in the conversation."""

    def __init__(self, index: int, reason: str) -> None:
        super().__init__(f"message {index}: {reason}")
        self.index = index
        self.reason = reason


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


class CallTracker:
    """The calls of the latest assistant tool-call message that still wait for their results.

    OpenAI requires an assistant message with tool_calls to be followed by one tool message per
    call before anything else, so a call group is contiguous; this is what makes a group atomic.
    """

    __slots__ = ("call_index", "pending")

    def __init__(self, call_index: int = -1, pending: Iterable[str] = ()) -> None:
        self.call_index = call_index
        self.pending: list[str] = list(pending)

    def check(self, message: Any, index: int, closing: bool = False) -> None:
        """Raise MessageError when `message` cannot come next at position `index`; record nothing.

        With `closing`, a non-tool message may come while calls wait: the caller answers them first.
        """
        if problem := shape_error(message):
            raise MessageError(index, problem)
        role = message["role"]
        if self.pending and not (closing and role != "tool"):
            if role != "tool":
                raise MessageError(
                    index,
                    f"a {role} message cannot come before the results of the tool calls at index "
                    f"{self.call_index} (still waiting for {', '.join(map(repr, self.pending))})",
                )
            if message["tool_call_id"] not in self.pending:
                raise MessageError(
                    index,
                    f"tool_call_id {message['tool_call_id']!r} is not among the calls waiting at index "
                    f"{self.call_index} ({', '.join(map(repr, self.pending))})",
                )
        elif not self.pending and role == "tool":
            raise MessageError(
                index, f"tool result {message['tool_call_id']!r} answers no earlier assistant tool call still open"
            )

    def accept(self, message: Any, index: int) -> None:
        """Validate `message` at conversation position `index`, then record it; raises MessageError."""
        self.check(message, index)
        if message["role"] == "tool":
            self.pending.remove(message["tool_call_id"])
        elif ids := call_ids(message):
            self.call_index, self.pending = index, list(ids)


def validate_messages(messages: Sequence[Any]) -> None:
    """Raise MessageError for the first message that is malformed or out of order."""
    tracker = CallTracker()
    for index, message in enumerate(messages):
        tracker.accept(message, index)
