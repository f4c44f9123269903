"""The API's endpoints as data: method, path, bodies and statuses. app.py binds a handler to each, openapi.py
documents each from the same entry, so the served document cannot leave a route out or describe another."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from turnstream.prompt.assemble import Prompt
from turnstream.schemas.context import ContextDoc
from turnstream.schemas.turn import SAFE_ID
from turnstream.serve.models import (
    EraseReply,
    ErrorReply,
    LiveReply,
    PromptRequest,
    ReadyReply,
    RecordReply,
    RecordRequest,
    SearchReply,
    SearchRequest,
)


@dataclass(frozen=True, slots=True)
class Param:
    """A path or query parameter."""

    name: str
    where: str
    """"path" or "query"."""
    schema: dict[str, Any]
    description: str
    required: bool = False


@dataclass(frozen=True, slots=True)
class Route:
    method: str
    path: str
    """aiohttp's form, which is also OpenAPI's: /v1/sessions/{session_id}."""
    operation: str
    """operationId, and the name of its handler in handlers.py."""
    summary: str
    replies: dict[int, Any]
    """Status -> the type of its JSON body (a pydantic model, or a dataclass such as Prompt)."""
    request: type[Any] | None = None
    params: tuple[Param, ...] = ()
    public: bool = False
    """Answered without a token: the probes, the metrics and this document."""
    errors: tuple[int, ...] = field(default=())
    """Error statuses besides those every authenticated route has (401, 500, 503)."""
    description: str = ""
    """What the summary leaves out: how the route answers for an id it has nothing of, a rule across fields."""


SESSION = Param(
    "session_id",
    "path",
    {"type": "string", "minLength": 1, "maxLength": 128, "pattern": SAFE_ID},
    "The session id, as in the turns (the tenant is the token's).",
    required=True,
)
USER = Param(
    "user_id",
    "path",
    {"type": "string", "minLength": 1, "maxLength": 128},
    "The user id (the tenant is the token's).",
    required=True,
)
USER_QUERY = Param(
    "user_id",
    "query",
    {"type": "string", "minLength": 1, "maxLength": 128},
    "The session's user: saves the round trip that looks up the session's owner.",
)
DRY_RUN = Param("dry_run", "query", {"type": "boolean"}, "Say what would be removed; change nothing.")

UNKNOWN = (
    "A session or user this token's tenant has nothing of (never written, erased, or another tenant's: the three "
    "read alike) "
)
"""How every route's description of an unknown id starts: one answer per route, whatever the reason."""

ROUTES: tuple[Route, ...] = (
    Route(
        "POST",
        "/v1/sessions/{session_id}/turns",
        "record",
        "Record turns (produced to Kafka, acks=all) and wait until the session's context includes the last one",
        {200: RecordReply, 202: RecordReply},
        RecordRequest,
        (SESSION,),
        errors=(404, 413, 422),
        description="Every turn's `session_id` must be the path's (422 naming `turns.N.session_id`); a turn may "
        "leave `tenant` out (it is the token's), and one naming another tenant is 404.",
    ),
    Route(
        "POST",
        "/v1/sessions/{session_id}/prompt",
        "prompt",
        "The prompt for the session's next model call: compacted context plus memory block, within a budget; "
        "one Redis round trip, no LLM call",
        {200: Prompt},
        PromptRequest,
        (SESSION,),
        errors=(413, 422),
        description=UNKNOWN + "is 200 with the prompt of what there is: the question, with the profile, memories and "
        "archived turns of `user_id` when it has some. A new session's first prompt is one. A prompt creates "
        "nothing for such a session, whatever `record` says: nothing to erase, no recall list, no Table row.",
    ),
    Route(
        "GET",
        "/v1/sessions/{session_id}/context",
        "context",
        "The session's compacted context document",
        {200: ContextDoc},
        None,
        (SESSION, USER_QUERY),
        errors=(404, 422),
        description=UNKNOWN + "is 404, as is a session whose context expired.",
    ),
    Route(
        "POST",
        "/v1/search",
        "search",
        "Search a user's memories and archived turns (dated, with scores); records nothing",
        {200: SearchReply},
        SearchRequest,
        errors=(413, 422),
        description=UNKNOWN + "is 200 with nothing found.",
    ),
    Route(
        "DELETE",
        "/v1/sessions/{session_id}",
        "erase_session",
        "Erase a session: context, recall list, archived turns, its memories, Table row (a worker must be running)",
        {200: EraseReply},
        None,
        (SESSION, DRY_RUN),
        errors=(404, 422),
        description=UNKNOWN + "is 404, dry run or not; so is a second erasure of the same session.",
    ),
    Route(
        "DELETE",
        "/v1/users/{user_id}",
        "erase_user",
        "Erase a user: every session of theirs and all their long-term data (a worker must be running)",
        {200: EraseReply},
        None,
        (USER, DRY_RUN),
        errors=(404, 422),
        description=UNKNOWN + "is 404, dry run or not; so is a second erasure of the same user.",
    ),
    Route("GET", "/v1/openapi.json", "openapi", "This document", {200: dict}, public=True),
    Route("GET", "/livez", "livez", "Liveness: the process answers", {200: LiveReply}, public=True),
    Route(
        "GET",
        "/readyz",
        "readyz",
        "Readiness: the broker producer is connected and Redis answers",
        {200: ReadyReply, 503: ReadyReply},
        public=True,
    ),
    Route("GET", "/metrics", "metrics", "Prometheus metrics (text exposition format)", {200: str}, public=True),
)

COMMON_ERRORS = (401, 500, 503)
ERROR_REPLY = ErrorReply
"""The body of every error status."""
