"""One handler per route of routes.py (named by its operation): parse and scope the request, call the SDK,
return its reply. Failures are raised; app.py turns them into replies (errors.py)."""

from __future__ import annotations

import re
from typing import Any, TypeVar

import orjson
from aiohttp import web
from pydantic import BaseModel, ValidationError

from turnstream.schemas.turn import SAFE_ID
from turnstream.serve.errors import InvalidRequest, NotFound, failure_of
from turnstream.serve.keys import BACKEND, METRICS, OPENAPI, SCOPE
from turnstream.serve.models import (
    EraseReply,
    LiveReply,
    PromptRequest,
    ReadyReply,
    RecordReply,
    RecordRequest,
    SearchReply,
    SearchRequest,
)
from turnstream.serve.scope import owner_for, scoped_turns
from turnstream.serve.service import erase_found

M = TypeVar("M", bound=BaseModel)
_SESSION_ID = re.compile(SAFE_ID)


def json_reply(body: Any, status: int = 200, headers: dict[str, str] | None = None) -> web.Response:
    return web.Response(body=orjson.dumps(body), status=status, content_type="application/json", headers=headers)


async def json_body(request: web.Request) -> Any:
    """The request's JSON (413 past the body limit, raised by aiohttp while reading)."""
    raw = await request.read()
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError as error:
        raise InvalidRequest(None, f"the body is not JSON: {error}") from None


def parse(model: type[M], data: Any) -> M:
    try:
        return model.model_validate(data)
    except ValidationError as error:
        raise InvalidRequest.of(error) from None


def path_id(request: web.Request, name: str) -> str:
    value = request.match_info[name]
    if not 0 < len(value) <= 128 or (name == "session_id" and not _SESSION_ID.match(value)):
        raise InvalidRequest(name, "1-128 characters" + (" of [A-Za-z0-9._:-]" if name == "session_id" else ""))
    return value


def flag(request: web.Request, name: str) -> bool:
    value = request.query.get(name, "false").lower()
    if value not in ("true", "false", "1", "0"):
        raise InvalidRequest(name, "true or false")
    return value in ("true", "1")


async def record(request: web.Request) -> web.Response:
    scope, backend = request[SCOPE], request.app[BACKEND]
    session_id = path_id(request, "session_id")
    data = await json_body(request)
    if isinstance(data, dict) and "turns" in data:
        data = {**data, "turns": scoped_turns(data["turns"], session_id, scope)}
    body = parse(RecordRequest, data)
    try:
        backend.require_broker()
        result = await backend.gateway.record_wait(body.turns, timeout=body.timeout_seconds)
    except Exception as error:  # the reply says whether the broker had the turns
        failure = failure_of(error, recording=True)
        if failure.status == 500:
            raise
        return json_reply(failure.body.model_dump(exclude_none=True), failure.status, failure.headers)
    version = result.doc.version if result.doc is not None else None
    detail = None if result.fresh else backend.worker.state().detail
    return json_reply(
        RecordReply(fresh=result.fresh, version=version, detail=detail).model_dump(), 200 if result.fresh else 202
    )


async def prompt(request: web.Request) -> web.Response:
    scope, backend = request[SCOPE], request.app[BACKEND]
    session_id = path_id(request, "session_id")
    body = parse(PromptRequest, await json_body(request))
    built = await backend.gateway.context.build_prompt(
        session_id, body.text, body.k, scope.tenant, body.user_id, body.record, body.budget_tokens, body.provenance
    )
    return json_reply(built.to_dict())


async def context(request: web.Request) -> web.Response:
    scope, backend = request[SCOPE], request.app[BACKEND]
    session_id = path_id(request, "session_id")
    user_id = request.query.get("user_id") or None
    if user_id is not None and len(user_id) > 128:
        raise InvalidRequest("user_id", "at most 128 characters")
    doc = await backend.gateway.context.get(session_id, scope.tenant, user_id)
    if doc is None:
        raise NotFound(session_id)
    return web.Response(body=doc.to_json(), content_type="application/json")


async def search(request: web.Request) -> web.Response:
    scope, backend = request[SCOPE], request.app[BACKEND]
    body = parse(SearchRequest, await json_body(request))
    owner = owner_for(scope, body.user_id, body.session_id)
    memory = backend.gateway.context.memory
    assert memory is not None  # GatewayClient's context client is built with its GatewayMemory
    found = await memory.search(owner, body.text, body.k, body.budget_tokens)
    return json_reply(SearchReply(recalled=found.recalled, archived=found.archived).model_dump())


async def _erase(request: web.Request, user: str | None, session: str | None) -> web.Response:
    scope, backend = request[SCOPE], request.app[BACKEND]
    dry_run = flag(request, "dry_run")
    what, counts = await erase_found(backend.settings, user=user, session=session, tenant=scope.tenant, dry_run=dry_run)
    return json_reply(EraseReply(erased=what, dry_run=dry_run, counts=dict(counts)).model_dump())


async def erase_session(request: web.Request) -> web.Response:
    return await _erase(request, None, path_id(request, "session_id"))


async def erase_user(request: web.Request) -> web.Response:
    return await _erase(request, path_id(request, "user_id"), None)


async def openapi(request: web.Request) -> web.Response:
    return web.Response(body=request.app[OPENAPI], content_type="application/json")


async def livez(request: web.Request) -> web.Response:
    return json_reply(LiveReply(live=True).model_dump())


async def readyz(request: web.Request) -> web.Response:
    backend = request.app[BACKEND]
    worker = backend.worker.state()
    checks = ReadyReply(
        ready=False,
        broker=backend.broker_connected,
        redis=await backend.redis_answers(),
        worker=worker.applying,
        detail=worker.detail,
    )
    # a worker that applies nothing leaves the API ready: it still takes turns (the broker keeps them) and
    # answers reads, and a balancer that dropped every gateway would not bring the worker back
    ready = checks.broker and checks.redis
    return json_reply(checks.model_copy(update={"ready": ready}).model_dump(), 200 if ready else 503)


async def metrics(request: web.Request) -> web.Response:
    return web.Response(body=request.app[METRICS].exposition(), content_type="text/plain")
