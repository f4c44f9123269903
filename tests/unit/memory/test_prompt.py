import time
from typing import Any

import pytest

from turnstream.compaction.marker import MARKERS, marker_message
from turnstream.compaction.tokens import count_messages
from turnstream.memory.prompt import assemble, split_context
from turnstream.memory.store import Recalled
from turnstream.schemas import ContextDoc

pytestmark = pytest.mark.unit

SYSTEM = {"role": "system", "content": "You are a travel agent."}
FIRST = {"role": "user", "content": "Plan a trip to Lisbon."}
BLOCK = {"role": "system", "content": "[Summary of the compressed history]\nThe user wants Lisbon."}


def doc(messages: list[dict[str, Any]], marker_index: int | None = None, summary: str = "") -> ContextDoc:
    return ContextDoc(
        session_id="s1", version=1, last_turn_id="t1", updated_at=time.time(), messages=messages,
        marker_index=marker_index, summary=summary, tokens={"before": 0, "after": 0, "budget": 100},
    )


def memory(n: int, text: str = "", type_: str = "fact") -> Recalled:
    return Recalled(f"id{n}", type_, text or f"memory {n}", 1.0 - n / 10, 1)


def test_compacted_context_splits_after_marker_and_summary() -> None:
    tail = [{"role": "assistant", "content": "Here are flights."}, {"role": "user", "content": "Cheaper ones?"}]
    compacted = doc([SYSTEM, FIRST, marker_message("en"), BLOCK, *tail], marker_index=2, summary="The user wants Lisbon.")
    head, rest = split_context(compacted, "And hotels?")
    assert head == [SYSTEM, FIRST, marker_message("en"), BLOCK] and rest == tail


def test_uncompacted_context_splits_after_the_first_user_message() -> None:
    greeting = {"role": "assistant", "content": "Welcome!"}
    later = [{"role": "assistant", "content": "Sure."}, {"role": "user", "content": "More?"}]
    assert split_context(doc([SYSTEM, greeting, FIRST, *later]), "x") == ([SYSTEM, greeting, FIRST], later)
    assert split_context(doc([SYSTEM]), "x") == ([SYSTEM], [])
    assert split_context(None, "x") == ([], [])


def test_the_new_user_message_is_not_repeated_when_already_applied() -> None:
    head, rest = split_context(doc([SYSTEM, FIRST, {"role": "assistant", "content": "ok"}, {"role": "user", "content": "And hotels?"}]), "And hotels?")
    assert head == [SYSTEM, FIRST] and rest == [{"role": "assistant", "content": "ok"}]


def test_order_is_head_memory_block_rest_user() -> None:
    tail = [{"role": "assistant", "content": "Here are flights."}]
    compacted = doc([SYSTEM, FIRST, marker_message("en"), BLOCK, *tail], marker_index=2, summary="x")
    messages, kept = assemble(compacted, "My name is Ana", [memory(1, "I love window seats", "preference")], "Seats?", 500, 6000)
    assert messages[:4] == [SYSTEM, FIRST, marker_message("en"), BLOCK]
    assert messages[4]["role"] == "system"
    assert "Profile:\nMy name is Ana" in messages[4]["content"] and "- (preference) I love window seats" in messages[4]["content"]
    assert messages[5:] == [*tail, {"role": "user", "content": "Seats?"}]
    assert [m.id for m in kept] == ["id1"]


def test_block_speaks_the_conversation_language() -> None:
    chat = doc([{"role": "user", "content": "我们去上海旅游吧"}])
    messages, _ = assemble(chat, "我叫小林", [memory(1, "我喜欢靠窗的座位", "preference")], "帮我订酒店", 500, 6000)
    assert messages[1]["content"].splitlines()[1:] == ["用户画像：", "我叫小林", "相关记忆：", "- （偏好）我喜欢靠窗的座位"]
    assert MARKERS["zh"] not in messages[1]["content"]


def test_no_profile_and_no_memories_means_no_block() -> None:
    messages, kept = assemble(doc([SYSTEM, FIRST]), "", [], "Hi there", 500, 6000)
    assert messages == [SYSTEM, FIRST, {"role": "user", "content": "Hi there"}] and kept == []


def test_over_budget_drops_lowest_scored_memories_then_cuts_profile() -> None:
    context = doc([SYSTEM, FIRST])
    profile = "\n".join(f"The user said thing number {n} worth keeping" for n in range(12))
    recalled = [memory(n, f"memory {n} " + "detail " * 20) for n in range(3)]
    base = count_messages([SYSTEM, FIRST, {"role": "user", "content": "q"}])
    full, kept = assemble(context, profile, recalled, "q", 500, 100_000)
    assert len(kept) == 3
    # room for the profile and one memory only
    budget = count_messages(assemble(context, profile, recalled[:1], "q", 500, 100_000)[0])
    assert budget < count_messages(full)
    messages, kept = assemble(context, profile, recalled, "q", 500, budget)
    assert count_messages(messages) <= budget
    assert [m.id for m in kept] == ["id0"]
    assert profile.split("\n")[-1] in messages[2]["content"]
    # room for a part of the profile only
    messages, kept = assemble(context, profile, recalled, "q", 500, base + 60)
    assert count_messages(messages) <= base + 60 and kept == []
    assert "thing number 11" in messages[2]["content"] and "thing number 0 " not in messages[2]["content"]
    # no room at all: the block goes, the context stays
    messages, kept = assemble(context, profile, recalled, "q", 500, base)
    assert messages == [SYSTEM, FIRST, {"role": "user", "content": "q"}] and kept == []
