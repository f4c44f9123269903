"""Turn values, good and bad, shared by the decoder and JSON Schema tests: (name, raw bytes, reason or None)."""

from __future__ import annotations

from typing import Any

import orjson

CALL = {"id": "call_1", "type": "function", "function": {"name": "weather", "arguments": '{"city":"Oslo"}'}}


def turn(**fields: Any) -> dict[str, Any]:
    base: dict[str, Any] = {"turn_id": "t1", "session_id": "s-1", "message": {"role": "user", "content": "hi"}}
    return {**base, **fields}


def raw(**fields: Any) -> bytes:
    return orjson.dumps(turn(**fields))


def without(field: str) -> bytes:
    data = turn()
    del data[field]
    return orjson.dumps(data)


GOOD: list[tuple[str, bytes]] = [
    ("minimal", raw()),
    ("all fields", raw(tenant="acme", user_id="u1", seq=3, ts=1.5e9, meta={"ip": "x"})),
    ("ts as integer", raw(ts=1700000000)),
    ("nulls for optionals", raw(tenant=None, user_id=None, seq=None, ts=None)),
    ("unknown field ignored", raw(extra_field=1)),
    ("session id with :._-", raw(session_id="user:42.chat_7-b")),
    ("system", raw(message={"role": "system", "content": "be brief"})),
    ("assistant call without content", raw(message={"role": "assistant", "content": None, "tool_calls": [CALL]})),
    ("assistant call, content absent", raw(message={"role": "assistant", "tool_calls": [CALL]})),
    ("tool result", raw(message={"role": "tool", "tool_call_id": "call_1", "content": "12C"})),
    (
        "content parts",
        raw(message={"role": "user", "content": [{"type": "text", "text": "see"}, {"type": "image_url"}]}),
    ),
    ("non-ASCII", raw(message={"role": "user", "content": "你好, Grüße"})),
]

BAD: list[tuple[str, bytes, str]] = [
    ("invalid utf-8", b'{"turn_id": "t1", "x": "\xff"}', "invalid_utf8"),
    ("not json", b'{"turn_id": ', "not_json"),
    ("empty value", b"", "not_json"),
    ("json array", b"[1, 2]", "schema"),
    ("missing turn_id", without("turn_id"), "schema"),
    ("missing session_id", without("session_id"), "schema"),
    ("missing message", without("message"), "schema"),
    ("empty turn_id", raw(turn_id=""), "schema"),
    ("long turn_id", raw(turn_id="t" * 129), "schema"),
    ("long session_id", raw(session_id="s" * 129), "schema"),
    ("seq as string", raw(seq="3"), "schema"),
    ("negative seq", raw(seq=-1), "schema"),
    ("ts as string", raw(ts="now"), "schema"),
    ("meta not an object", raw(meta=[1]), "schema"),
    ("tenant with colon", raw(tenant="a:b"), "schema"),
    ("session id with space", raw(session_id="a b"), "unsafe_session_id"),
    ("session id with brace", raw(session_id="s{1}"), "unsafe_session_id"),
    ("session id with slash and bad seq", raw(session_id="../x", seq=-1), "unsafe_session_id"),
    ("unknown role", raw(message={"role": "robot", "content": "x"}), "schema"),
    ("no role", raw(message={"content": "x"}), "schema"),
    ("user without content", raw(message={"role": "user"}), "schema"),
    ("user with null content", raw(message={"role": "user", "content": None}), "schema"),
    ("assistant null content, no calls", raw(message={"role": "assistant", "content": None}), "schema"),
    ("content a number", raw(message={"role": "user", "content": 5}), "schema"),
    ("tool without call id", raw(message={"role": "tool", "content": "x"}), "schema"),
    ("user with tool_calls", raw(message={"role": "user", "content": "x", "tool_calls": [CALL]}), "schema"),
    (
        "call without function",
        raw(message={"role": "assistant", "tool_calls": [{"id": "c", "type": "function"}]}),
        "schema",
    ),
    (
        "arguments not a string",
        raw(message={"role": "assistant", "tool_calls": [{"id": "c", "function": {"name": "f", "arguments": {}}}]}),
        "schema",
    ),
    ("text part without text", raw(message={"role": "user", "content": [{"type": "text"}]}), "schema"),
]
