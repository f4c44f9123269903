"""Responses-API input items <-> chat messages, as TurnstreamSession converts them: pure, no services."""

from __future__ import annotations

from typing import Any

import pytest

from turnstream.compaction.compactor import compact
from turnstream.compaction.incremental import PopError
from turnstream.compaction.marker import marker_message
from turnstream.integrations.openai_agents import context_items, messages_from_items, poppable, tail_start
from turnstream.schemas.context import ContextDoc

USER = {"role": "user", "content": "Weather in Lisbon and Porto?"}
OUTPUT_MESSAGE = {
    "id": "msg_1",
    "type": "message",
    "role": "assistant",
    "status": "completed",
    "content": [{"type": "output_text", "text": "Sunny in both.", "annotations": []}],
}


def call(call_id: str, name: str = "weather") -> dict[str, Any]:
    return {
        "type": "function_call",
        "id": f"fc_{call_id}",
        "call_id": call_id,
        "name": name,
        "arguments": f'{{"city": "{call_id}"}}',
        "status": "completed",
    }


def output(call_id: str, text: str = "sunny") -> dict[str, Any]:
    return {"type": "function_call_output", "call_id": call_id, "output": text}


def doc(messages: list[dict[str, Any]], budget: int = 10_000) -> ContextDoc:
    result = compact(messages, budget)
    return ContextDoc(**result.to_dict(), session_id="s", version=len(messages), last_turn_id="x", updated_at=0.0)


def test_messages_of_every_role_and_content_form() -> None:
    items = [
        {"role": "developer", "content": "Be brief."},
        {
            "type": "message",
            "role": "user",
            "content": [{"type": "input_text", "text": "Hi"}, {"type": "input_image", "image_url": "https://x/i.png"}],
        },
        OUTPUT_MESSAGE,
        {"role": "assistant", "content": [{"type": "refusal", "refusal": "I cannot."}]},
    ]
    assert messages_from_items(items) == [
        {"role": "system", "content": "Be brief."},
        {
            "role": "user",
            "content": [{"type": "text", "text": "Hi"}, {"type": "input_image", "image_url": "https://x/i.png"}],
        },
        {"role": "assistant", "content": "Sunny in both."},
        {"role": "assistant", "content": "I cannot."},
    ]


def test_consecutive_function_calls_are_one_assistant_message_and_outputs_are_tool_messages() -> None:
    items = [
        USER,
        call("lis"),
        {"type": "reasoning", "id": "rs_1", "summary": []},
        call("opo"),
        output("lis"),
        output("opo", "cloudy"),
        call("faro"),
        output("faro"),
    ]
    messages = messages_from_items(items)
    assert [m["role"] for m in messages] == ["user", "assistant", "tool", "tool", "assistant", "tool"]
    assert [c["id"] for c in messages[1]["tool_calls"]] == ["lis", "opo"]
    assert messages[1]["tool_calls"][0] == {
        "id": "lis",
        "type": "function",
        "function": {"name": "weather", "arguments": '{"city": "lis"}'},
    }
    assert messages[3] == {"role": "tool", "tool_call_id": "opo", "content": "cloudy"}
    assert [c["id"] for c in messages[4]["tool_calls"]] == ["faro"]


def test_reasoning_hosted_calls_and_references_are_dropped() -> None:
    items = [
        {"type": "reasoning", "id": "rs", "summary": []},
        {"type": "web_search_call", "id": "ws", "status": "completed"},
        {"type": "item_reference", "id": "msg_0"},
        USER,
    ]
    assert messages_from_items(items) == [USER]


def test_items_come_back_as_they_went_in_bar_ids_and_developer_roles() -> None:
    items = [USER, call("lis"), call("opo"), output("lis"), output("opo"), OUTPUT_MESSAGE]
    back = context_items(messages_from_items(items))
    assert back == [
        USER,
        *[
            {k: v for k, v in c.items() if k in ("type", "call_id", "name", "arguments")}
            for c in (call("lis"), call("opo"))
        ],
        output("lis"),
        output("opo"),
        {"role": "assistant", "content": "Sunny in both."},
    ]


def test_an_unanswered_call_is_left_out() -> None:
    messages = messages_from_items([USER, call("lis"), call("opo"), output("lis")])
    assert [item.get("call_id") for item in context_items(messages)] == [None, "lis", "lis"]


def test_limit_takes_the_newest_items_widened_to_keep_a_step_whole() -> None:
    messages = messages_from_items(
        [
            USER,
            OUTPUT_MESSAGE,
            call("lis"),
            call("opo"),
            output("lis"),
            output("opo"),
            {"role": "user", "content": "Thanks"},
        ]
    )
    assert context_items(messages, limit=1) == [{"role": "user", "content": "Thanks"}]
    widened = context_items(messages, limit=2)
    assert [item.get("call_id") for item in widened] == ["lis", "opo", "lis", "opo", None]
    assert context_items(messages, limit=100) == context_items(messages)
    assert context_items(messages, limit=0) == []


def test_the_tail_starts_after_the_anchors_or_after_the_summary_block() -> None:
    assert tail_start(doc([{"role": "system", "content": "S"}, USER, {"role": "assistant", "content": "A"}])) == 2
    assert tail_start(doc([{"role": "system", "content": "S"}, {"role": "assistant", "content": "Hello"}])) == 1
    long = [USER] + [
        {"role": "user" if n % 2 else "assistant", "content": f"message number {n} " * 20} for n in range(40)
    ]
    compacted = doc(long, budget=600)
    assert compacted.marker_index == 1 and compacted.messages[1] == marker_message(compacted.language or "en")
    start = tail_start(compacted)
    assert compacted.positions[start - 1] is None and compacted.positions[start] is not None


def test_poppable_names_the_newest_tail_message_and_refuses_anchors_and_multi_item_messages() -> None:
    assert poppable(doc([USER, {"role": "assistant", "content": "A"}])) == (1, {"role": "assistant", "content": "A"})
    assert poppable(doc(messages_from_items([USER, call("lis"), output("lis")])))[1] == output("lis")
    with pytest.raises(PopError, match="no longer in the context's tail"):
        poppable(doc([USER]))
    with pytest.raises(PopError, match="holds 2 items"):
        poppable(doc(messages_from_items([USER, call("lis"), call("opo")])))
