"""TurnstreamSession under the real OpenAI Agents SDK, on a real worker, Apache Kafka, Redis and a local LLM server."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from agents import Agent, OpenAIChatCompletionsModel, Runner, set_tracing_disabled
from openai import AsyncOpenAI

from tests.support.llm_server import LLMServer
from tests.support.pipeline import read_dead_letters
from tests.support.worker import running_worker
from turnstream.client import ContextClient, TurnProducer
from turnstream.integrations._turns import SessionErased, next_seq
from turnstream.integrations.openai_agents import TurnstreamSession, messages_from_items
from turnstream.kafka.admin import ensure_topics
from turnstream.schemas.control import PopRequest, pop_record
from turnstream.settings import Settings
from turnstream.stack.processes import settings_env
from turnstream.text.tokens import REPLY_PRIMING_TOKENS, count_message

pytestmark = pytest.mark.integration

GETTING_STARTED = Path(__file__).parents[3] / "docs" / "getting-started.md"
WORKER_START_TIMEOUT = 120.0


def agents_history(items: int) -> list[dict[str, Any]]:
    """A ReAct conversation as the SDK stores it: a question, parallel and single tool calls with their outputs,
    answers; `items` long, ending on an answer."""
    history: list[dict[str, Any]] = [{"role": "user", "content": "I plan a trip through Portugal; keep my notes."}]
    step = 0
    while len(history) < items - 1:
        calls = [f"call_{step}_{n}" for n in range(1 + step % 2)]  # every other step calls two tools at once
        history.append({"role": "user", "content": f"What about stop {step}? " + "Tell me everything. " * 5})
        history += [
            {
                "type": "function_call",
                "call_id": c,
                "name": "lookup",
                "arguments": f'{{"stop": {step}}}',
                "id": f"fc_{c}",
                "status": "completed",
            }
            for c in calls
        ]
        history += [
            {"type": "function_call_output", "call_id": c, "output": f"Stop {step}: " + "museum, beach, cafe. " * 12}
            for c in calls
        ]
        history.append(
            {
                "id": f"msg_{step}",
                "type": "message",
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": f"Stop {step} has a museum.", "annotations": []}],
            }
        )
        step += 1
    history = history[: items - 1]
    while history[-1].get("type") == "function_call":  # cut inside a step: no call without its output
        history.pop()
    return history + [{"role": "assistant", "content": "That is the whole trip."}]


def assert_calls_whole(items: list[Any]) -> None:
    """Every call has its output and every output its call, the output after the call."""
    seen: dict[str, int] = {}
    for index, item in enumerate(items):
        if item.get("type") == "function_call":
            seen[item["call_id"]] = index
        elif item.get("type") == "function_call_output":
            assert seen.pop(item["call_id"], None) is not None, f"output {item['call_id']} without its call"
    outputs = {item["call_id"] for item in items if item.get("type") == "function_call_output"}
    assert not set(seen) - outputs, f"calls without outputs: {set(seen) - outputs}"


@pytest.mark.timeout(400)
async def test_a_long_history_comes_back_compacted_and_a_pop_is_applied_once(settings: Settings) -> None:
    await ensure_topics(settings)
    history = agents_history(120)
    assert len(history) == 120
    with running_worker(settings):
        async with (
            TurnstreamSession("trip", user_id="maya", settings=settings, timeout=WORKER_START_TIMEOUT) as session,
            ContextClient.from_settings(settings) as context,
        ):
            await session.add_items(history[:1])  # the worker's start is in this one's wait
            session.timeout = 30.0
            await session.add_items(history[1:])
            items = await session.get_items()
            before = await context.get("trip", user_id="maya")
            assert before is not None and before.marker_index is not None  # the history was compressed
            tokens = REPLY_PRIMING_TOKENS + sum(count_message(m) for m in messages_from_items(items))
            assert tokens <= settings.budget_tokens and before.tokens.after <= settings.budget_tokens
            assert items[0] == history[0] and items[-1] == history[-1]
            assert any(item.get("type") == "function_call" for item in items)
            assert_calls_whole(items)
            assert_calls_whole(await session.get_items(limit=5))

            popped = await session.pop_item()
            assert popped == history[-1]
            after_pop = await session.get_items()
            assert after_pop == items[:-1]
            popped_doc = await context.get("trip", user_id="maya")
            assert popped_doc is not None and popped_doc.version == before.version + 1

            # the very pop record, replayed twice: both are duplicates of an applied turn; a new pop of the same
            # message finds another newest one and is dead-lettered
            replay = pop_record(
                PopRequest("trip", None, popped_doc.last_turn_id, next_seq(before), before.positions[-1])
            )
            stale = pop_record(PopRequest("trip", None, "stale-pop", next_seq(popped_doc), before.positions[-1]))
            async with TurnProducer(settings) as producer:
                for value in (replay, replay, stale):
                    await (await producer.send_raw(b"trip", value))
            await session.add_items([{"role": "user", "content": "One more stop?"}])  # behind the replays
            (dead,) = await read_dead_letters(settings, 1)
            reasons = dict(dead.headers)
            assert dead.value == stale and reasons["x-turnstream-reason"] == b"pop"
            assert f"cannot pop position {before.positions[-1]}".encode() in reasons["x-turnstream-detail"]
            final = await context.get("trip", user_id="maya")
            assert final is not None and final.version == popped_doc.version + 1
            assert await session.get_items() == [*after_pop, {"role": "user", "content": "One more stop?"}]

            await session.clear_session()
            assert await session.get_items() == []
            session.timeout = 2.0
            with pytest.raises(SessionErased, match="was erased"):
                await session.add_items([{"role": "user", "content": "Still there?"}])


def guide_example() -> str:
    """The first python block after docs/getting-started.md's sentence introducing the Agents SDK example."""
    after = GETTING_STARTED.read_text().split("An agent with a turnstream session", 1)[1]
    match = re.search(r"```python\n(.*?)```", after, re.S)
    assert match, "no python block after 'An agent with a turnstream session' in docs/getting-started.md"
    return match.group(1)


@pytest.mark.timeout(400)
async def test_runner_runs_twice_on_a_session_and_the_guide_example_runs_as_written(
    settings: Settings,
    llm_server: Any,
    tmp_path: Path,
) -> None:
    server: LLMServer = llm_server()  # echoes the newest message: what a run sent is in its reply
    set_tracing_disabled(True)
    model = OpenAIChatCompletionsModel(
        model="local", openai_client=AsyncOpenAI(base_url=server.base_url, api_key="test")
    )
    agent = Agent(name="travel", instructions="Answer briefly.", model=model)
    await ensure_topics(settings)
    with running_worker(settings):
        async with TurnstreamSession("runs", settings=settings, timeout=WORKER_START_TIMEOUT) as session:
            first = await Runner.run(agent, "My budget is 3500 EUR.", session=session)
            second = await Runner.run(agent, "Which hotels fit it?", session=session)
            assert (first.final_output, second.final_output) == ("My budget is 3500 EUR.", "Which hotels fit it?")
            sent = [(m["role"], m.get("content")) for m in server.requests[1]["messages"]]
            assert ("assistant", "My budget is 3500 EUR.") in sent  # the first run's last item
            assert [item.get("content") for item in await session.get_items()] == [
                "My budget is 3500 EUR.",
                "My budget is 3500 EUR.",
                "Which hotels fit it?",
                "Which hotels fit it?",
            ]

        script = tmp_path / "agent.py"
        script.write_text(guide_example())
        env = {**os.environ, **settings_env(settings), "OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "test"}
        done = subprocess.run(
            [sys.executable, str(script)], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=180
        )
        assert done.returncode == 0, done.stderr[-3000:]
        assert done.stdout.splitlines()[-2:] == [
            "My budget is 3500 EUR. | Which hotels fit it?",
            "4 items in the compacted context",
        ]
