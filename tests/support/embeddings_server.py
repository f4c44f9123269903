"""A real local HTTP server speaking the OpenAI embeddings API (`POST /v1/embeddings`), for the openai embedder.

    def test_x(embeddings_server, minilm):
        server = embeddings_server(minilm)             # serves the in-process model, on 127.0.0.1, random port
        embedder = OpenAIEmbedder(server.base_url, "test", "minilm", 384)
        server.mode = "fail"                          # switch behaviour mid-test
        assert server.count == 1 and server.requests[0]["input"]

Modes: "ok" (the model's vectors), "slow" (sleep `delay` seconds, then answer), "fail" (HTTP 500),
"garbage" (200 with a non-JSON body), "short" (vectors one dimension short), "scaled" (vectors times 3, in
reverse order with their indexes: a server that neither normalises nor keeps the order).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal

import orjson
import pytest

from turnstream.embeddings.base import Embedder

Mode = Literal["ok", "slow", "fail", "garbage", "short", "scaled"]


class EmbeddingsServer:
    """The server's state: behaviour (mutable at any time) and every request body received."""

    def __init__(self, embedder: Embedder, mode: Mode = "ok", delay: float = 2.0) -> None:
        self.embedder = embedder
        self.mode: Mode = mode
        self.delay = delay
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, name="embeddings-server", daemon=True
        )
        self._thread.start()

    @property
    def base_url(self) -> str:
        """OpenAI base URL of this server (ends in /v1)."""
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    @property
    def count(self) -> int:
        with self._lock:
            return len(self.requests)

    def record(self, body: dict[str, Any]) -> None:
        with self._lock:
            self.requests.append(body)

    def reply(self, body: dict[str, Any]) -> dict[str, Any]:
        """An embeddings response body in OpenAI's shape, for this mode."""
        texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
        vectors = self.embedder.embed_passages(texts).tolist()
        rows = [{"object": "embedding", "index": n, "embedding": vector} for n, vector in enumerate(vectors)]
        if self.mode == "short":
            rows = [{**row, "embedding": row["embedding"][:-1]} for row in rows]
        elif self.mode == "scaled":
            rows = [{**row, "embedding": [3 * x for x in row["embedding"]]} for row in reversed(rows)]
        return {
            "object": "list",
            "data": rows,
            "model": body.get("model"),
            "usage": {"prompt_tokens": 0, "total_tokens": 0},
        }

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()


def _handler(server: EmbeddingsServer) -> type[BaseHTTPRequestHandler]:
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
            if self.path.rstrip("/") != "/v1/embeddings":
                self._send(404, b'{"error": {"message": "not found"}}')
                return
            body = orjson.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
            server.record(body)
            if server.mode == "slow":
                time.sleep(server.delay)
            if server.mode == "fail":
                self._send(500, b'{"error": {"message": "injected failure", "type": "server_error"}}')
            elif server.mode == "garbage":
                self._send(200, b"<html>not json</html>")
            else:
                self._send(200, orjson.dumps(server.reply(body)))

    return Handler


@pytest.fixture
def embeddings_server() -> Iterator[Callable[..., EmbeddingsServer]]:
    """Factory fixture: `embeddings_server(embedder, mode=..., delay=...)` starts a server; all stop on teardown."""
    started: list[EmbeddingsServer] = []

    def start(embedder: Embedder, mode: Mode = "ok", delay: float = 2.0) -> EmbeddingsServer:
        started.append(EmbeddingsServer(embedder, mode, delay))
        return started[-1]

    yield start
    for server in started:
        server.stop()
