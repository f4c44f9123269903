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

import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal

import orjson
import pytest

Mode = Literal["ok", "slow", "fail", "garbage", "empty"]


@dataclass(frozen=True)
class ToolCall:
    """A reply that calls a tool instead of answering."""

    name: str
    arguments: str
    """The arguments as the model writes them: JSON text, or anything else a test wants to send."""
    id: str = "call_1"


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


class LLMServer:
    """The server's state: behaviour (mutable at any time) and every request body received."""

    def __init__(self, reply: Reply = echo_reply, mode: Mode = "ok", delay: float = 2.0) -> None:
        self.reply = reply
        self.mode: Mode = mode
        self.delay = delay
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._httpd.daemon_threads = True
        # A short poll interval makes stop() (shutdown) return quickly.
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, name="llm-server", daemon=True
        )
        self._thread.start()

    @property
    def base_url(self) -> str:
        """OpenAI base URL of this server (ends in /v1)."""
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    @property
    def count(self) -> int:
        """Requests received so far."""
        with self._lock:
            return len(self.requests)

    def record(self, body: dict[str, Any]) -> None:
        with self._lock:
            self.requests.append(body)

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()


def completion(content: str | ToolCall, model: str) -> dict[str, Any]:
    """A chat completion response body in OpenAI's shape: an answer, or a call of one tool."""
    if isinstance(content, ToolCall):
        function = {"name": content.name, "arguments": content.arguments}
        message: dict[str, Any] = {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": content.id, "type": "function", "function": function}],
        }
        finish = "tool_calls"
    else:
        message, finish = {"role": "assistant", "content": content}, "stop"
    return {
        "id": "chatcmpl-local",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0},
    }


def _handler(server: LLMServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:  # keep test output clean
            pass

        def _send(self, status: int, body: bytes) -> None:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            try:
                self.wfile.write(body)
            except (BrokenPipeError, ConnectionResetError):  # the client timed out and left
                pass

        def do_POST(self) -> None:
            if self.path.rstrip("/") != "/v1/chat/completions":
                self._send(404, b'{"error": {"message": "not found"}}')
                return
            body = orjson.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
            server.record(body)
            mode = server.mode
            if mode == "slow":
                time.sleep(server.delay)
            if mode == "fail":
                self._send(500, b'{"error": {"message": "injected failure", "type": "server_error"}}')
            elif mode == "garbage":
                self._send(200, b"<html>not json</html>")
            elif mode == "empty":
                self._send(200, orjson.dumps({**completion("", str(body.get("model"))), "choices": []}))
            else:
                self._send(200, orjson.dumps(completion(server.reply(body), str(body.get("model")))))

    return Handler


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
