"""Long-term memory written by the worker from turns in Kafka, read back by build_prompt with no LLM call."""

from __future__ import annotations

import asyncio
from typing import Any

from tests.support.pipeline import produce, wait_for_versions
from tests.support.worker import running_worker
from turnstream.client import ContextClient
from turnstream.kafka.admin import ensure_topics
from turnstream.redis.memory_store import MemoryStore
from turnstream.settings import Settings
from turnstream.text.tokens import count_messages

USER_LINES = [
    "Hi! I'm planning a trip to Lisbon in May.",
    "My budget is 2000 EUR for the whole trip.",
    "I prefer boutique hotels near the old town.",
    "Again, the budget is 2000 EUR, please keep to it.",
    "Actually my budget is 3500 EUR, not 2000.",
]


def user_turns(session_id: str, user_id: str, lines: list[str]) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [{"role": "system", "content": "You are a travel assistant."}]
    for line in lines:
        messages += [{"role": "user", "content": line}, {"role": "assistant", "content": "Noted."}]
    return [
        {"turn_id": f"{session_id}-{seq}", "session_id": session_id, "user_id": user_id, "seq": seq, "message": message}
        for seq, message in enumerate(messages)
    ]


async def test_a_corrected_fact_is_one_memory_and_is_recalled_without_an_llm(settings: Settings, llm_server) -> None:
    server = llm_server(reply=lambda body: "an LLM summary")
    settings = settings.model_copy(update={"openai_base_url": server.base_url, "llm_timeout_seconds": 2.0})
    turns = user_turns("trip-1", "maya", USER_LINES)
    await ensure_topics(settings)
    with running_worker(settings) as worker:
        await produce(settings, turns)
        async with ContextClient.from_settings(settings) as client:
            await wait_for_versions(client, {"trip-1": len(turns)}, worker)
            memories = await MemoryStore(client.store.redis, settings).list("maya")
            budget_memories = [m for m in memories if "budget" in m.text.lower()]
            assert len(budget_memories) == 1, [m.text for m in memories]
            assert "3500" in budget_memories[0].text and "2000 EUR" not in budget_memories[0].text

            asked_before = server.count
            prompt = await client.build_prompt("trip-1", "What's my budget for the hotel?", user_id="maya")
            assert any("3500" in m["text"] for m in prompt.recalled), prompt.recalled
            assert not prompt.skipped_recall
            assert prompt.messages[-1] == {"role": "user", "content": "What's my budget for the hotel?"}
            assert count_messages(prompt.messages) <= settings.prompt_budget_tokens

            greeting = await client.build_prompt("trip-1", "hello!", user_id="maya")
            assert greeting.skipped_recall and greeting.recalled == []
            assert server.count == asked_before, "the read path never calls the LLM"


SEAT_CORRECTION = [
    "Quick note: I am severely allergic to sesame, please remember that.",
    "Also my hometown is Tampere, and I prefer aisle seats.",
    "Correction: I prefer window seats, not aisle seats.",
]


def trip_planning_trace() -> list[dict[str, Any]]:
    """A ReAct step after the user's notes: a thought, two parallel tool calls, their results, an answer."""
    calls = [
        {"id": f"call_{n}", "type": "function", "function": {"name": name, "arguments": args}}
        for n, (name, args) in enumerate(
            [("search_flights", '{"from": "TMP", "to": "LIS"}'), ("search_hotels", '{"city": "Lisbon"}')]
        )
    ]
    return [
        {"role": "assistant", "content": "Thought: I should find flights from Tampere and a hotel."},
        {"role": "assistant", "content": None, "tool_calls": calls},
        {"role": "tool", "tool_call_id": "call_0", "content": '{"flights": 3, "cheapest": "TMP-LIS 189 EUR"}'},
        {"role": "tool", "tool_call_id": "call_1", "content": '{"hotels": 5, "best": "Casa Alfama 95 EUR"}'},
        {"role": "assistant", "content": "I found 3 flights and 5 hotels; the cheapest flight is 189 EUR."},
    ]


async def test_a_corrected_preference_is_one_memory_in_its_own_words(settings: Settings) -> None:
    turns = user_turns("trip-seat", "ilona", SEAT_CORRECTION)
    turns += [
        {
            "turn_id": f"trip-seat-{len(turns) + n}",
            "session_id": "trip-seat",
            "user_id": "ilona",
            "seq": len(turns) + n,
            "message": message,
        }
        for n, message in enumerate(trip_planning_trace())
    ]
    await ensure_topics(settings)
    with running_worker(settings) as worker:
        await produce(settings, turns)
        async with ContextClient.from_settings(settings) as client:
            await wait_for_versions(client, {"trip-seat": len(turns)}, worker)
            memory = MemoryStore(client.store.redis, settings)
            texts = [m.text for m in await memory.list("ilona")]
            assert [text for text in texts if "seat" in text] == ["Correction: I prefer window seats, not aisle seats."]
            assert any("Tampere" in text for text in texts) and any("sesame" in text for text in texts), texts
            profile, _ = await memory.profile("ilona")
            assert "I prefer aisle seats" not in profile and "window seats" in profile, profile
            prompt = await client.build_prompt("trip-seat", "Which seat should I book on the flight?", user_id="ilona")
            block = [
                m["content"] for m in prompt.messages if m["role"] == "system" and "window" in (m["content"] or "")
            ]
            assert block and not any("I prefer aisle seats" in text for text in block), block
            assert not any("I prefer aisle seats" in m["text"] for m in prompt.recalled), prompt.recalled


def agent_task(steps: int) -> list[dict[str, Any]]:
    """`steps` rounds of the trip-planning ReAct step, each with call ids of its own."""
    messages: list[dict[str, Any]] = []
    for step in range(steps):
        for message in trip_planning_trace():
            calls = [{**call, "id": f"{call['id']}_{step}"} for call in message.get("tool_calls") or []]
            answered = {"tool_call_id": f"{message['tool_call_id']}_{step}"} if "tool_call_id" in message else {}
            messages.append({**message, **({"tool_calls": calls} if calls else {}), **answered})
    return messages


async def test_a_preference_corrected_in_the_middle_of_an_agent_task_is_never_the_summary_memory_s_current_value(
    settings: Settings,
) -> None:
    # a small window: the notes leave it for the rolling summary, which keeps them as they were said, and the
    # summary memory is written (every 16 versions) before the correction comes; the task ends before the next one
    settings = settings.model_copy(update={"budget_tokens": 300})
    messages = [turn["message"] for turn in user_turns("trip-task", "ilona", SEAT_CORRECTION[:2])]
    messages += [
        *agent_task(3),
        {"role": "user", "content": SEAT_CORRECTION[2]},
        {"role": "assistant", "content": "Noted."},
    ]
    messages += agent_task(1)
    turns = [
        {"turn_id": f"trip-task-{seq}", "session_id": "trip-task", "user_id": "ilona", "seq": seq, "message": message}
        for seq, message in enumerate(messages)
    ]
    await ensure_topics(settings)
    with running_worker(settings) as worker:
        await produce(settings, turns)
        async with ContextClient.from_settings(settings) as client:
            await wait_for_versions(client, {"trip-task": len(turns)}, worker)
            memories = await MemoryStore(client.store.redis, settings).list("ilona")
    summaries = [m.text for m in memories if m.type == "summary"]
    assert summaries and any("Tampere" in text for text in summaries), [m.text for m in memories]
    lines = [line for text in summaries for line in text.split("\n") if "aisle seats" in line]
    assert all("window seats" in line for line in lines), lines
    # the facts' own memories as before: one seat preference, in the correction's words
    assert [m.text for m in memories if m.type != "summary" and "seat" in m.text] == [SEAT_CORRECTION[2]]


def profile_or_summary(body: dict[str, Any]) -> str:
    if "profile" in body["messages"][0]["content"]:
        return "Maya: budget 3500 EUR, boutique hotels, Lisbon in May."
    return "The user is planning Lisbon."


async def test_the_profile_is_condensed_by_the_llm_off_the_hot_path(settings: Settings, llm_server) -> None:
    server = llm_server(reply=profile_or_summary)
    settings = settings.model_copy(
        update={
            "openai_base_url": server.base_url,
            "budget_tokens": 120,
            "profile_read_chars": 50,
            "llm_timeout_seconds": 2.0,
        }
    )
    turns = user_turns("trip-2", "maya", USER_LINES)
    await ensure_topics(settings)
    with running_worker(settings) as worker:
        await produce(settings, turns)
        async with ContextClient.from_settings(settings) as client:
            await wait_for_versions(client, {"trip-2": len(turns)}, worker)
            memory = MemoryStore(client.store.redis, settings)
            condensed = profile_or_summary({"messages": [{"content": "profile"}]})[
                : settings.profile_read_chars
            ].strip()
            deadline = asyncio.get_running_loop().time() + 30
            while (await memory.profile("maya"))[0] != condensed:
                assert asyncio.get_running_loop().time() < deadline, await memory.profile("maya")
                await asyncio.sleep(0.3)
            prompt = await client.build_prompt("trip-2", "Which hotel then?", user_id="maya")
    assert any(condensed in str(m.get("content")) for m in prompt.messages)
    assert any("profile" in body["messages"][0]["content"] for body in server.requests)
