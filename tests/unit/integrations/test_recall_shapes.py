"""The recall tool's three shapes carry the one schema and description, and answer a model's bad arguments with the
error text without reading anything: their clients point at a port where no Redis listens."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from agents.tool_context import ToolContext
from langchain_core.utils.function_calling import convert_to_openai_tool

from turnstream.client import ContextClient, SyncContextClient
from turnstream.integrations import langchain, openai_agents
from turnstream.integrations.openai_tools import RecallHandler
from turnstream.integrations.recall import DESCRIPTION, NAME, chat_tool

NOWHERE = "redis://127.0.0.1:1/0"
BAD = '{"query": "Biscuit", "user_id": "bob"}'
REFUSED = "Error: unknown argument user_id; the arguments are query, budget_tokens, max_memories"


@pytest.fixture
def sync_client() -> Iterator[SyncContextClient]:
    with SyncContextClient.from_url(NOWHERE) as client:
        yield client


def test_the_plain_handler_carries_the_chat_tool_and_refuses_bad_arguments(sync_client: SyncContextClient) -> None:
    handler = RecallHandler(sync_client, user_id="maya", tenant="acme")
    assert handler.schema == chat_tool()
    assert handler(BAD) == REFUSED


async def test_the_agents_sdk_tool_is_the_chat_tool_as_a_function_tool() -> None:
    async with ContextClient.from_url(NOWHERE) as client:
        tool = openai_agents.recall_tool(client, user_id="maya")
        function = chat_tool()["function"]
        assert (tool.name, tool.description, tool.params_json_schema) == (NAME, DESCRIPTION, function["parameters"])
        assert tool.strict_json_schema
        context = ToolContext(None, tool_name=NAME, tool_call_id="call_1", tool_arguments=BAD)
        assert await tool.on_invoke_tool(context, BAD) == REFUSED


async def test_the_langchain_tool_shows_a_model_the_chat_tool_and_refuses_bad_arguments(
    sync_client: SyncContextClient,
) -> None:
    tool = langchain.recall_tool(sync_client, session_id="anon-1")
    shown = convert_to_openai_tool(tool)["function"]
    assert {key: shown[key] for key in ("name", "description", "parameters")} == {
        key: chat_tool()["function"][key] for key in ("name", "description", "parameters")
    }
    arguments = {"query": "Biscuit", "user_id": "bob"}
    assert tool.invoke(arguments) == REFUSED
    assert await tool.ainvoke(arguments) == REFUSED  # a SyncContextClient's handler, on a thread


def test_a_tool_without_an_owner_is_refused_where_it_is_built(sync_client: SyncContextClient) -> None:
    with pytest.raises(ValueError, match="names user_id or session_id"):
        RecallHandler(sync_client, tenant="acme")
    with pytest.raises(ValueError, match="names user_id or session_id"):
        langchain.recall_tool(sync_client, user_id="")


async def test_a_handler_on_the_asyncio_client_says_to_await_it() -> None:
    async with ContextClient.from_url(NOWHERE) as client:
        handler = RecallHandler(client, user_id="maya")
        with pytest.raises(TypeError, match="acall"):
            handler(BAD)
        assert await handler.acall(BAD) == REFUSED
