"""The shared part of the local servers that speak one OpenAI endpoint (the tests' llm_server.py and
embeddings_server.py, the bench's stand-in model): a real HTTP server on 127.0.0.1 at a random port, every request
body recorded, and the faults the tests inject.

Modes all know: "slow" (sleep `delay` seconds, then answer), "fail" (HTTP 500), "garbage" (200 with a non-JSON
body). Any other mode is the subclass's `answer`.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar

import orjson


class OpenAIServer:
    """The server's state: behaviour (`mode`, mutable at any time) and every request body received."""

    path: ClassVar[str]
    """The endpoint served, under /v1."""

    def __init__(self, mode: str, delay: float) -> None:
        self.mode = mode
        self.delay = delay
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._httpd.daemon_threads = True
        # A short poll interval makes stop() (shutdown) return quickly.
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, name=type(self).__name__, daemon=True
        )
        self._thread.start()

    @property
    def base_url(self) -> str:
        """OpenAI base URL of this server (ends in /v1)."""
        port = self._httpd.server_address[1]
        return f"http://127.0.0.1:{port}/v1"

    @property
    def count(self) -> int:
        """Requests received so far."""
        with self._lock:
            return len(self.requests)

    def record(self, body: dict[str, Any]) -> None:
        with self._lock:
            self.requests.append(body)

    def answer(self, body: dict[str, Any]) -> dict[str, Any]:
        """The 200 response body to `body` in the current mode (not a fault both servers inject)."""
        raise NotImplementedError

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()


@dataclass(frozen=True)
class ToolCall:
    """A reply that calls a tool instead of answering."""

    name: str
    arguments: str
    """The arguments as the model writes them: JSON text, or anything else a test wants to send."""
    id: str = "call_1"


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


def _handler(server: OpenAIServer) -> type[BaseHTTPRequestHandler]:
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
            if self.path.rstrip("/") != f"/v1/{server.path}":
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
            else:
                self._send(200, orjson.dumps(server.answer(body)))

    return Handler
