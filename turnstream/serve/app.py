"""The API's aiohttp app: one middleware checks the token, limits the body, maps failures and times every
request; the routes and their handlers come from routes.py and handlers.py.

aiohttp, as the inspector: it is installed wherever the worker is (Faust serves its views with it).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable

import orjson
from aiohttp import web
from aiohttp.typedefs import Middleware

from turnstream.serve import handlers
from turnstream.serve.errors import NOT_FOUND, failure_of
from turnstream.serve.keys import BACKEND, METRICS, OPENAPI, SCOPE
from turnstream.serve.metrics import ServeMetrics
from turnstream.serve.models import ErrorReply
from turnstream.serve.openapi import openapi_document
from turnstream.serve.routes import ROUTES
from turnstream.serve.scope import Scope
from turnstream.serve.service import Backend
from turnstream.serve.tenants import TokenTable, bearer

log = logging.getLogger(__name__)
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
PUBLIC = frozenset(route.path for route in ROUTES if route.public)
UNAUTHORIZED = ErrorReply(error="unauthorized", detail="send a valid token: Authorization: Bearer TOKEN")


def _error(status: int, body: ErrorReply, headers: dict[str, str] | None = None) -> web.Response:
    return handlers.json_reply(body.model_dump(exclude_none=True), status, headers)


def scope_of(tokens: TokenTable | None, authorization: str) -> Scope | None:
    """The scope a request's Authorization header gives; None when it gives none. `tokens` None: the API was
    started open (loopback only), every request acts without a tenant."""
    if tokens is None:
        return Scope(None)
    token = bearer(authorization)
    tenant = tokens.resolve(token) if token is not None else None
    return Scope(tenant) if tenant is not None else None


def guard(tokens: TokenTable | None, max_body: int) -> Middleware:
    @web.middleware
    async def middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
        started = time.perf_counter()
        resource = request.match_info.route.resource
        route = resource.canonical if resource is not None else "unmatched"
        response = await _answer(request, handler, route)
        request.app[METRICS].observe(route, request.method, response.status, time.perf_counter() - started)
        return response

    async def _answer(request: web.Request, handler: Handler, route: str) -> web.StreamResponse:
        if route not in PUBLIC:
            scope = scope_of(tokens, request.headers.get("Authorization", ""))
            if scope is None:
                return _error(401, UNAUTHORIZED, {"WWW-Authenticate": 'Bearer realm="turnstream"'})
            request[SCOPE] = scope
        if (request.content_length or 0) > max_body:
            return _error(413, ErrorReply(error="too_large", detail=f"the body is over {max_body} bytes"))
        try:
            return await handler(request)
        except web.HTTPRequestEntityTooLarge:
            return _error(413, ErrorReply(error="too_large", detail=f"the body is over {max_body} bytes"))
        except web.HTTPNotFound:
            return _error(404, NOT_FOUND)
        except web.HTTPException as error:  # 405 and the like: aiohttp's own reply
            return error
        except Exception as error:
            failure = failure_of(error)
            if failure.status == 500:
                log.exception("serve: %s %s failed", request.method, route)
            return _error(failure.status, failure.body, failure.headers)

    return middleware


def build_app(backend: Backend, tokens: TokenTable | None, max_body: int) -> web.Application:
    """The API over `backend`; `tokens` None serves open (the caller has checked the bind is loopback)."""
    app = web.Application(middlewares=[guard(tokens, max_body)], client_max_size=max_body)
    app[BACKEND] = backend
    app[METRICS] = ServeMetrics()
    app[OPENAPI] = orjson.dumps(openapi_document())
    for route in ROUTES:
        app.router.add_route(route.method, route.path, getattr(handlers, route.operation))
    return app
