"""The LangChain history and the LangGraph pre-model hook on a running worker (real broker and Redis), the
hook's agent driving a real local chat completions server through the openai client."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import openai
import pytest
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
    convert_to_openai_messages,
)
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import RunnableLambda
from langchain_core.runnables.history import RunnableWithMessageHistory
from langgraph.prebuilt import create_react_agent

from tests.support.llm_server import LLMServer
from tests.support.worker import running_worker
from turnstream.client import ContextClient, GatewayClient
from turnstream.integrations.langchain import (
    SessionErased,
    TurnstreamChatMessageHistory,
    from_langchain,
    model_input,
    shared_gateway,
    turnstream_pre_model_hook,
)
from turnstream.kafka.admin import ensure_topics
from turnstream.settings import Settings
from turnstream.text.tokens import count_messages

pytestmark = pytest.mark.integration

WARM_UP = 120.0
"""Seconds the first record may wait: the worker joins its group meanwhile."""
CITIES = ["Oslo", "Bergen", "Tromso", "Alesund", "Stavanger", "Bodo"]
FIRST = "My name is Maya; plan a nine day trip through Norway by train."


@pytest.fixture
def lc_settings(settings: Settings) -> Iterator[Settings]:
    """A small budget, so a long history is compacted many times; the process's shared client closed at the end."""
    settings = settings.model_copy(update={"budget_tokens": 1200, "turn_partitions": 2})
    yield settings
    shared_gateway(settings).close()


def trip() -> list[BaseMessage]:
    """120 messages: the task, then steps of a question, one or two tool calls, their results and an answer."""
    messages: list[BaseMessage] = [HumanMessage(FIRST)]
    for step in range(26):
        calls = [
            {"id": f"call_{step}_{n}", "name": "search_trains", "args": {"to": CITIES[(step + n) % 6], "day": step}}
            for n in range(1 + step % 2)
        ]
        results = [
            ToolMessage(f"{step}: " + " ".join(CITIES[(step + k) % 6] for k in range(30)), tool_call_id=c["id"])
            for c in calls
        ]
        messages += [
            HumanMessage(f"What about day {step}?"),
            AIMessage(f"Looking at day {step}.", tool_calls=calls),
            *results,
            AIMessage(f"Day {step}: the {8 + step % 9}:05 train."),
        ]
    messages += [HumanMessage("Thanks, that is all."), AIMessage("Have a good trip, Maya.")]
    assert len(messages) == 120
    return messages


def assert_calls_with_results(messages: list[BaseMessage]) -> None:
    """Every AIMessage's tool calls answered right after it, every ToolMessage by a call just before."""
    for index, message in enumerate(messages):
        if isinstance(message, AIMessage) and message.tool_calls:
            answers = messages[index + 1 : index + 1 + len(message.tool_calls)]
            assert sorted(m.tool_call_id for m in answers if isinstance(m, ToolMessage)) == sorted(
                c["id"] for c in message.tool_calls
            )
        if isinstance(message, ToolMessage):
            opener = next(m for m in reversed(messages[:index]) if not isinstance(m, ToolMessage))
            assert isinstance(opener, AIMessage) and message.tool_call_id in {c["id"] for c in opener.tool_calls}


def add_trip(history: TurnstreamChatMessageHistory) -> list[BaseMessage]:
    """The trip added as a gateway would: a first block in one call, then a few messages per call, call groups split
    across calls as they come."""
    messages = trip()
    history.add_messages(messages[:60])
    history.timeout = 20.0
    for start in range(60, len(messages), 6):
        history.add_messages(messages[start : start + 6])
    return messages


async def test_a_long_history_comes_back_compacted_with_its_calls_whole_and_clear_erases_it(
    lc_settings: Settings,
) -> None:
    settings = lc_settings
    await ensure_topics(settings)
    history = TurnstreamChatMessageHistory("trip-1", user_id="maya", tenant="acme", settings=settings, timeout=WARM_UP)
    with running_worker(settings):
        added = add_trip(history)
        got = history.messages
        assert got == await history.aget_messages()
        doc = shared_gateway(settings).context.get("trip-1", "acme", "maya")
        assert doc is not None and doc.marker_index is not None and history.version == doc.version
        assert count_messages(from_langchain(got)) <= settings.budget_tokens < count_messages(from_langchain(added))
        assert isinstance(got[doc.marker_index], SystemMessage)
        assert got[0] == HumanMessage(FIRST)
        assert from_langchain(got[-3:]) == from_langchain(added[-3:])
        assert any(isinstance(m, AIMessage) and m.tool_calls for m in got)
        assert_calls_with_results(got)
        history.add_messages([])  # nothing to record: no turn, no wait

        history.clear()
        assert history.messages == [] and await history.aget_messages() == []
        history.timeout = 3.0
        with pytest.raises(SessionErased, match="use a new session id"):
            history.add_messages([HumanMessage("one more thing")])


@pytest.mark.filterwarnings("ignore:RunnableWithMessageHistory is deprecated")  # deprecated, still what many run
async def test_runnable_with_message_history_sees_what_it_added_on_the_previous_call(lc_settings: Settings) -> None:
    settings = lc_settings
    seen: list[list[tuple[str, Any]]] = []

    def model(messages: list[BaseMessage]) -> AIMessage:
        seen.append([(m.type, m.content) for m in messages])
        return AIMessage(f"answer {len(seen)}")

    await ensure_topics(settings)
    with running_worker(settings):
        async with GatewayClient(settings) as gateway:

            def histories(sid: str) -> TurnstreamChatMessageHistory:
                return TurnstreamChatMessageHistory(
                    sid, tenant="acme", settings=settings, async_gateway=gateway, timeout=WARM_UP
                )

            chain = RunnableWithMessageHistory(RunnableLambda(model), histories)
            chain.invoke([HumanMessage("Where is Bergen?")], {"configurable": {"session_id": "chat-1"}})
            chain.invoke([HumanMessage("And Oslo?")], {"configurable": {"session_id": "chat-1"}})
            await chain.ainvoke([HumanMessage("Where is Bodo?")], {"configurable": {"session_id": "chat-2"}})
            await chain.ainvoke([HumanMessage("And Tromso?")], {"configurable": {"session_id": "chat-2"}})
            assert [m.content for m in await histories("chat-2").aget_messages()] == [
                "Where is Bodo?",
                "answer 3",
                "And Tromso?",
                "answer 4",
            ]
    assert seen[1] == [("human", "Where is Bergen?"), ("ai", "answer 1"), ("human", "And Oslo?")]
    assert seen[3] == [("human", "Where is Bodo?"), ("ai", "answer 3"), ("human", "And Tromso?")]


class ServerChatModel(BaseChatModel):
    """The smallest chat model on the local server: the messages go out through the openai client."""

    base_url: str

    @property
    def _llm_type(self) -> str:
        return "local-chat-completions"

    def _generate(
        self, messages: list[BaseMessage], stop: list[str] | None = None, run_manager: Any = None, **kwargs: Any
    ) -> ChatResult:
        client = openai.OpenAI(base_url=self.base_url, api_key="test")
        reply = client.chat.completions.create(model="local", messages=convert_to_openai_messages(messages))  # type: ignore[arg-type]
        return ChatResult(generations=[ChatGeneration(message=AIMessage(reply.choices[0].message.content or ""))])


@pytest.mark.filterwarnings(
    "ignore:create_react_agent has been moved"
)  # its successor is in `langchain`, not installed
async def test_a_react_agent_s_model_gets_the_compacted_context_not_the_state(
    lc_settings: Settings,
    llm_server: Callable[..., LLMServer],
) -> None:
    settings = lc_settings
    server = llm_server()
    agent = create_react_agent(
        ServerChatModel(base_url=server.base_url), tools=[], pre_model_hook=turnstream_pre_model_hook(settings)
    )
    config: Any = {"configurable": {"thread_id": "trip-2", "user_id": "maya", "tenant": "acme"}}
    await ensure_topics(settings)
    history = TurnstreamChatMessageHistory("trip-2", user_id="maya", tenant="acme", settings=settings, timeout=WARM_UP)
    with running_worker(settings):
        state = add_trip(history)
        doc = shared_gateway(settings).context.get("trip-2", "acme", "maya")
        assert doc is not None and doc.marker_index is not None
        marker = doc.messages[doc.marker_index]
        question = HumanMessage("Which train do I take on day 25?")
        expected = (
            shared_gateway(settings)
            .context.build_prompt("trip-2", str(question.content), tenant="acme", user_id="maya", record=False)
            .messages
        )
        result = agent.invoke({"messages": [*state, question]}, config)
        async with ContextClient.from_settings(settings) as context:
            async_agent = create_react_agent(
                ServerChatModel(base_url=server.base_url),
                tools=[],
                pre_model_hook=turnstream_pre_model_hook(settings, async_context=context),
            )
            await async_agent.ainvoke({"messages": [*state, question]}, config)
    assert [m.content for m in result["messages"][-2:]] == [question.content, question.content]  # the server echoes
    assert len(result["messages"]) == len(state) + 2  # the state keeps everything; only the model's input is cut
    for request in server.requests:
        sent = request["messages"]
        assert marker in sent and {"role": "user", "content": FIRST} in sent
        assert sent[-1] == {"role": "user", "content": question.content}
        assert len(sent) < len(state) and count_messages(sent) <= settings.prompt_budget_tokens
    assert server.count == 2
    first = [(m["role"], m.get("content") or "") for m in server.requests[0]["messages"]]
    within = convert_to_openai_messages(model_input(expected, [question], settings.prompt_budget_tokens))
    assert first == [(m["role"], m.get("content") or "") for m in within]
    given = iter([(m["role"], m.get("content") or "") for m in expected])
    assert all(pair in given for pair in first)  # what build_prompt gives, less what LangChain's sending overruns
