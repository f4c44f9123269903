"""The MCP HTTP transport's token check, on a bare ASGI app."""

from __future__ import annotations

from typing import Any

import orjson

from turnstream.mcp_server.auth import TENANT_STATE, with_tenants
from turnstream.serve.tenants import TokenTable

TOKEN = "acme-token-0123456789"
TABLE = TokenTable.of([(TOKEN, "acme")])


async def run(headers: list[tuple[bytes, bytes]]) -> tuple[list[dict[str, Any]], list[Any]]:
    seen: list[Any] = []

    async def app(scope: Any, receive: Any, send: Any) -> None:
        seen.append(scope["state"][TENANT_STATE])

    sent: list[dict[str, Any]] = []

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    async def receive() -> dict[str, Any]:
        return {"type": "http.request"}

    await with_tenants(app, TABLE)({"type": "http", "headers": headers}, receive, send)
    return sent, seen


async def test_a_valid_token_passes_its_tenant_to_the_app() -> None:
    sent, seen = await run([(b"authorization", f"Bearer {TOKEN}".encode())])
    assert seen == ["acme"] and sent == []


async def test_no_token_or_a_wrong_one_is_401_and_the_app_never_runs() -> None:
    for headers in ([], [(b"authorization", b"Bearer nope")], [(b"authorization", f"Basic {TOKEN}".encode())]):
        sent, seen = await run(headers)
        assert seen == [] and sent[0]["status"] == 401
        assert orjson.loads(sent[1]["body"])["error"] == "unauthorized"
