"""The streamable HTTP transport's token check: every request carries a bearer token of the tokens file, and the
tenant it maps to goes with the request to the tools (as for the HTTP API, serve/tenants.py)."""

from __future__ import annotations

import orjson
from starlette.types import ASGIApp, Receive, Scope, Send

from turnstream.serve.tenants import TokenTable, bearer

TENANT_STATE = "turnstream_tenant"
"""Where the request's tenant sits in the ASGI scope's state (Starlette's `request.state`)."""


def header(scope: Scope, name: bytes) -> str:
    return next((value.decode("latin-1") for key, value in scope.get("headers", []) if key.lower() == name), "")


def with_tenants(app: ASGIApp, tokens: TokenTable) -> ASGIApp:
    """`app` behind the token check: 401 without a valid token, else the token's tenant in the request state."""

    async def guarded(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await app(scope, receive, send)
            return
        token = bearer(header(scope, b"authorization"))
        tenant = tokens.resolve(token) if token is not None else None
        if tenant is None:
            body = orjson.dumps({"error": "unauthorized", "detail": "send a valid token: Authorization: Bearer TOKEN"})
            await send(
                {
                    "type": "http.response.start",
                    "status": 401,
                    "headers": [
                        (b"content-type", b"application/json"),
                        (b"www-authenticate", b'Bearer realm="turnstream"'),
                    ],
                }
            )
            await send({"type": "http.response.body", "body": body})
            return
        scope.setdefault("state", {})[TENANT_STATE] = tenant
        await app(scope, receive, send)

    return guarded
