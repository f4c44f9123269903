"""A real local HTTP server speaking the OpenAI chat completions API, for LLM-path tests.

    def test_x(llm_server):
        server = llm_server(reply=lambda body: "summary")   # started on 127.0.0.1, random port
        client = openai.OpenAI(base_url=server.base_url, api_key="test")
        server.mode = "fail"                                  # switch behaviour mid-test
        assert server.count == 1 and server.requests[0]["messages"]

Modes: "ok" (reply from `reply(body)`), "slow" (sleep `delay` seconds, then reply),
"fail" (HTTP 500), "garbage" (200 with a non-JSON body), "empty" (200 with no choices).

A reply may call a tool instead of answering: `reply` returns a ToolCall, and `call_then_answer(name, arguments)`
is the agent loop's two steps (call the tool, then answer with what it returned).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any, Literal

import pytest

from turnstream_tools.openai_server import OpenAIServer, ToolCall, completion

Mode = Literal["ok", "slow", "fail", "garbage", "empty"]


Reply = Callable[[dict[str, Any]], "str | ToolCall"]


def echo_reply(body: dict[str, Any]) -> str:
    """Default reply: the last message's content, so a test can see what the prompt carried."""
    messages = body.get("messages") or [{}]
    return str(messages[-1].get("content", ""))


def call_then_answer(name: str, arguments: str) -> Reply:
    """Call tool `name` with `arguments`, then, once the newest message is the tool's result, answer with that result
    as it came: the run's final output is what the tool gave the model."""

    def reply(body: dict[str, Any]) -> str | ToolCall:
        newest = (body.get("messages") or [{}])[-1]
        return echo_reply(body) if newest.get("role") == "tool" else ToolCall(name, arguments)

    return reply


class LLMServer(OpenAIServer):
    """Answers at /v1/chat/completions with `reply(body)`."""

    path = "chat/completions"

    def __init__(self, reply: Reply = echo_reply, mode: Mode = "ok", delay: float = 2.0) -> None:
        self.reply = reply
        super().__init__(mode, delay)

    def answer(self, body: dict[str, Any]) -> dict[str, Any]:
        model = str(body.get("model"))
        if self.mode == "empty":
            return {**completion("", model), "choices": []}
        return completion(self.reply(body), model)


@pytest.fixture
def llm_server() -> Iterator[Callable[..., LLMServer]]:
    """Factory fixture: `llm_server(reply=..., mode=..., delay=...)` starts a server; all are stopped on teardown."""
    started: list[LLMServer] = []

    def start(reply: Reply = echo_reply, mode: Mode = "ok", delay: float = 2.0) -> LLMServer:
        started.append(LLMServer(reply, mode, delay))
        return started[-1]

    yield start
    for server in started:
        server.stop()
