"""Validation: each malformed or out-of-order message is named by its index and reason."""

from __future__ import annotations

import pytest

from turnstream.compaction import MessageError, validate_messages

SYS = {"role": "system", "content": "be brief"}
USER = {"role": "user", "content": "hi"}


def call(*ids: str, content: str | None = None) -> dict:
    calls = [{"id": i, "type": "function", "function": {"name": "f", "arguments": "{}"}} for i in ids]
    return {"role": "assistant", "content": content, "tool_calls": calls}


def result(call_id: str) -> dict:
    return {"role": "tool", "tool_call_id": call_id, "content": "ok"}


@pytest.mark.parametrize(
    ("bad", "reason"),
    [
        ("not a dict", "expected an object"),
        ({"content": "x"}, "missing role"),
        ({"role": "", "content": "x"}, "empty role"),
        ({"role": 3, "content": "x"}, "role must be a string"),
        ({"role": "bot", "content": "x"}, "unknown role 'bot'"),
        ({"role": "user", "content": 5}, "content must be a string"),
        ({"role": "user", "content": None}, "content is missing"),
        ({"role": "user"}, "content is missing"),
        ({"role": "assistant", "content": None}, "content is missing"),
        ({"role": "user", "content": [{"text": "x"}]}, "content part 0"),
        ({"role": "user", "content": [{"type": "text"}]}, "no string 'text'"),
        ({"role": "user", "content": "x", "tool_calls": call("a")["tool_calls"]}, "only assistant"),
        ({"role": "assistant", "content": None, "tool_calls": {"id": "a"}}, "must be a list"),
        ({"role": "assistant", "content": None, "tool_calls": ["a"]}, "tool_calls[0] is not an object"),
        (
            {"role": "assistant", "content": None, "tool_calls": [{"function": {"name": "f", "arguments": "{}"}}]},
            "no string 'id'",
        ),
        (call("a", "a"), "repeats id 'a'"),
        (
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [{"id": "a", "type": "x", "function": {"name": "f", "arguments": "{}"}}],
            },
            "expected 'function'",
        ),
        ({"role": "assistant", "content": None, "tool_calls": [{"id": "a"}]}, "no 'function' object"),
        (
            {"role": "assistant", "content": None, "tool_calls": [{"id": "a", "function": {"arguments": "{}"}}]},
            "no string 'name'",
        ),
        (
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [{"id": "a", "function": {"name": "f", "arguments": {}}}],
            },
            "arguments must be a string",
        ),
        ({"role": "tool", "content": "x"}, "no string tool_call_id"),
        (result("zz"), "answers no earlier assistant tool call"),
    ],
)
def test_bad_message_is_named_by_index(bad: object, reason: str) -> None:
    with pytest.raises(MessageError) as raised:
        validate_messages([SYS, USER, {"role": "assistant", "content": "ok"}, bad, USER])
    assert raised.value.index == 3
    assert reason in raised.value.reason
    assert str(raised.value).startswith("message 3: ")


def test_valid_shapes_pass() -> None:
    validate_messages(
        [
            SYS,
            USER,
            {
                "role": "user",
                "content": [{"type": "text", "text": "look"}, {"type": "image_url", "image_url": {"url": "u"}}],
            },
            call("a", "b", content="thinking"),
            result("b"),
            result("a"),
            {"role": "assistant", "content": "done", "tool_calls": []},
            call("c"),  # a trailing call still in flight is fine
        ]
    )


@pytest.mark.parametrize(
    ("messages", "index", "reason"),
    [
        ([USER, call("a"), USER], 2, "cannot come before the results"),
        ([USER, call("a", "b"), result("a"), {"role": "assistant", "content": "x"}], 3, "still waiting for 'b'"),
        ([USER, call("a"), result("b")], 2, "not among the calls waiting at index 1"),
        ([USER, call("a"), result("a"), result("a")], 3, "answers no earlier"),
    ],
)
def test_tool_results_follow_their_call(messages: list, index: int, reason: str) -> None:
    with pytest.raises(MessageError) as raised:
        validate_messages(messages)
    assert (raised.value.index, reason in raised.value.reason) == (index, True)


def test_call_ids_may_be_reused_after_they_are_answered() -> None:
    validate_messages([USER, call("call_0"), result("call_0"), call("call_0"), result("call_0")])
