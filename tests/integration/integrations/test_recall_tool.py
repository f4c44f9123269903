"""The recall tool in its three shapes, each driven by its own framework's real API: an Agents SDK Runner whose model
(the local chat completions server) calls it, LangChain's tool invoked with a model's tool call, and the plain tools
entry sent by the openai client with the handler answering the call. The archive is a real worker's (Apache Kafka,
Redis) for the Runner, written with ArchiveStore for the others; each tool must return the dated turn that answers
and nothing of another user's."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import openai
import orjson
import pytest
from agents import Agent, OpenAIChatCompletionsModel, Runner, set_tracing_disabled
from langchain_core.messages import ToolMessage
from redis.asyncio import Redis

from tests.support.llm_server import LLMServer, call_then_answer
from tests.support.worker import running_worker
from turnstream.client import ContextClient, GatewayClient, SyncContextClient
from turnstream.integrations import langchain, openai_agents
from turnstream.integrations.openai_tools import RecallHandler
from turnstream.integrations.recall import NAME, NOTHING_FOUND, chat_tool
from turnstream.kafka.admin import ensure_topics
from turnstream.memory.archive import archive_entry
from turnstream.redis.archive import ArchiveStore
from turnstream.schemas.ids import owner_key
from turnstream.settings import Settings
from turnstream.stack.processes import settings_env

pytestmark = pytest.mark.integration

GETTING_STARTED = Path(__file__).parents[3] / "docs" / "getting-started.md"
MAY_8_2023 = 1683554160.0
DAY = 86400.0
WARM_UP = 120.0
"""Seconds the first record may wait: the worker joins its group meanwhile."""
MAYA = [
    ("I adopted a greyhound named Biscuit last week.", MAY_8_2023),
    ("What a lovely name!", MAY_8_2023 + 60),
    ("We booked the Alfama hotel in Lisbon for 3500 EUR.", MAY_8_2023 + 3 * DAY),
]
BOB = [("My greyhound is called Rex.", MAY_8_2023 + DAY), ("Rex loves the beach.", MAY_8_2023 + DAY + 60)]
"""Another user of the same tenant with a matching turn: a tool of Maya's must never show it."""
QUERY = orjson.dumps({"query": "greyhound dog name", "budget_tokens": None, "max_memories": None}).decode()
BISCUIT_LINE = "User: I adopted a greyhound named Biscuit last week (the week before 8 May 2023)."
"""How the worker archives Maya's turn: the speaker of a user turn without a name, the relative date pinned."""


def turns(session_id: str, user_id: str, said: list[tuple[str, float]]) -> list[dict[str, Any]]:
    return [
        {
            "turn_id": f"{session_id}-{n}",
            "session_id": session_id,
            "tenant": "acme",
            "user_id": user_id,
            "seq": n,
            "ts": ts,
            "message": {"role": "user" if n % 2 == 0 else "assistant", "content": text},
        }
        for n, (text, ts) in enumerate(said)
    ]


def assert_maya_s_dog(result: str) -> None:
    """The dated turn that answers, its neighbour, and nothing of Bob's."""
    lines = result.splitlines()
    assert "[8 May 2023]" in lines and lines.index("[8 May 2023]") < lines.index(BISCUIT_LINE), result
    assert "Assistant: What a lovely name!" in lines
    assert "Rex" not in result and "9 May 2023" not in result


@pytest.mark.timeout(400)
async def test_an_agents_sdk_runner_calls_the_tool_and_its_model_gets_the_owner_s_dated_turns(
    settings: Settings,
    llm_server: Callable[..., LLMServer],
) -> None:
    await ensure_topics(settings)
    server = llm_server(reply=call_then_answer(NAME, QUERY))
    set_tracing_disabled(True)
    client = openai.AsyncOpenAI(base_url=server.base_url, api_key="test")
    model = OpenAIChatCompletionsModel(model="local", openai_client=client)
    with running_worker(settings):
        async with GatewayClient(settings) as gateway:
            await gateway.record(turns("maya-1", "maya", MAYA), timeout=WARM_UP)
            await gateway.record(turns("bob-1", "bob", BOB), timeout=30)
            agent = Agent(
                name="assistant",
                instructions="Answer briefly.",
                model=model,
                tools=[openai_agents.recall_tool(gateway.context, user_id="maya", tenant="acme")],
            )
            result = await Runner.run(agent, "What was my dog called again?")
            server.reply = call_then_answer(NAME, '{"query": "Rex", "user_id": "bob"}')  # a model reaching for Bob
            refused = await Runner.run(agent, "And Bob's dog?")
    assert_maya_s_dog(result.final_output)
    first, second = server.requests[:2]
    (tool,) = first["tools"]
    assert tool["function"]["name"] == NAME and "query" in tool["function"]["parameters"]["properties"]
    answered = second["messages"][-1]
    assert answered["role"] == "tool" and answered["content"] == result.final_output  # what the model was given
    assert refused.final_output.startswith("Error: unknown argument user_id")  # an answer; the run went on


@pytest.fixture
async def archived(redis_settings: Settings) -> AsyncIterator[Settings]:
    """Maya's and Bob's turns in their archives as the worker writes them, and turns of an anonymous session."""
    archive = ArchiveStore(Redis.from_url(redis_settings.redis_url or ""), redis_settings)
    owners = {
        owner_key("maya", "acme", "maya-1"): turns("maya-1", "maya", MAYA),
        owner_key("bob", "acme", "bob-1"): turns("bob-1", "bob", BOB),
        owner_key(None, "acme", "anon-1"): turns("anon-1", "", [("Our greyhound Luna naps.", MAY_8_2023)]),
    }
    for owner, said in owners.items():
        entries = [
            archive_entry(f"acme:{t['session_id']}", t["turn_id"], t["seq"], t["message"], t["ts"], language="en")
            for t in said
        ]
        await archive.append(owner, [e for e in entries if e is not None])
    await archive.redis.aclose()
    yield redis_settings


def tool_call(arguments: dict[str, Any]) -> dict[str, Any]:
    return {"name": NAME, "args": arguments, "id": "call_7", "type": "tool_call"}


async def test_the_langchain_tool_answers_a_model_s_call_from_either_client(archived: Settings) -> None:
    call = tool_call({"query": "greyhound dog name", "budget_tokens": 300, "max_memories": None})
    with SyncContextClient.from_settings(archived) as sync_client:
        tool = langchain.recall_tool(sync_client, user_id="maya", tenant="acme")
        message = tool.invoke(call)
        in_a_thread = await tool.ainvoke(call)
        bad = tool.invoke(tool_call({"query": "greyhound", "budget_tokens": 100000}))
        anonymous = langchain.recall_tool(sync_client, session_id="anon-1", tenant="acme").invoke(call)
    async with ContextClient.from_settings(archived) as client:
        awaited = await langchain.recall_tool(client, user_id="maya", tenant="acme").ainvoke(call)
    assert isinstance(message, ToolMessage) and message.tool_call_id == "call_7" and message.name == NAME
    assert_maya_s_dog(str(message.content))
    assert in_a_thread.content == awaited.content == message.content
    assert bad.content == "Error: budget_tokens must be a whole number from 100 to 4000, or null"
    assert "Luna" in str(anonymous.content) and "Biscuit" not in str(anonymous.content)  # a session's own archive


def guide_example() -> str:
    """The python block after docs/getting-started.md's sentence introducing the plain chat completions exchange."""
    after = GETTING_STARTED.read_text().split("A whole exchange", 1)[1]
    match = re.search(r"```python\n(.*?)```", after, re.S)
    assert match, "no python block after 'A whole exchange' in docs/getting-started.md"
    return match.group(1)


async def test_the_guide_s_plain_exchange_sends_the_tools_entry_and_the_model_reads_the_dated_turn(
    archived: Settings,
    llm_server: Callable[..., LLMServer],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    server = llm_server(reply=call_then_answer(NAME, QUERY))
    for name, value in {**settings_env(archived), "OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "test"}.items():
        monkeypatch.setenv(name, value)
    exec(compile(guide_example(), str(GETTING_STARTED), "exec"), {})  # the example as written, in this process
    answer = capsys.readouterr().out
    assert_maya_s_dog(answer)
    first, second = server.requests
    assert first["tools"] == [chat_tool()] and second["tools"] == [chat_tool()]
    assert second["messages"][-2]["tool_calls"][0]["function"] == {"name": NAME, "arguments": QUERY}
    assert second["messages"][-1] == {"role": "tool", "tool_call_id": "call_1", "content": answer.rstrip("\n")}


def test_the_handler_answers_what_matches_nothing_and_what_is_no_json(archived: Settings) -> None:
    with SyncContextClient.from_settings(archived) as client:
        recall = RecallHandler(client, user_id="maya", tenant="acme")
        assert recall('{"query": "quantum chromodynamics"}') == NOTHING_FOUND
        assert recall("{query: greyhound").startswith("Error: the arguments must be one JSON object")
