"""Validation of OpenAI chat messages, one at a time, against the tool calls still waiting for results."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from turnstream.errors import TurnstreamError
from turnstream.schemas.message import shape_error
from turnstream.text.chat import call_ids


class MessageError(TurnstreamError, ValueError):
    """A message the compactor cannot accept; `index` is its position in the conversation."""

    def __init__(self, index: int, reason: str) -> None:
        super().__init__(f"message {index}: {reason}")
        self.index = index
        self.reason = reason


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
