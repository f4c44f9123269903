"""The inspector's aiohttp app: two pages, a token check on every request, no script allowed to run.

aiohttp, not a new web framework: Faust already serves its web views with it, so it is installed
wherever the worker is, and two server-rendered pages need no more.
"""

from __future__ import annotations

import base64
import binascii
import hmac
import ipaddress
import logging
import re
from collections.abc import Awaitable, Callable

from aiohttp import web
from aiohttp.typedefs import Middleware
from aiokafka.errors import KafkaError
from pydantic import ValidationError

from turnstream.client.context import GatewayMemory
from turnstream.inspector.diff_page import diff_page
from turnstream.inspector.pages import SessionView, VersionView, error_page, list_page, session_page, version_page
from turnstream.inspector.views import dropped_positions, session_rows, user_of
from turnstream.kafka.session_log import LogUnreadable
from turnstream.operations.diff import DiffPlan, DiffRefused, compare
from turnstream.operations.rebuild import NotInLog, rebuild_beside, verdict
from turnstream.redis.errors import REDIS_UNAVAILABLE
from turnstream.redis.inspection import MAX_DROPPED_SHOWN, InspectReader
from turnstream.schemas.turn import SAFE_ID
from turnstream.session.replay import Target
from turnstream.settings import TOPIC_PREFIX_PATTERN

log = logging.getLogger(__name__)

MAX_SEARCH_CHARS = 200
MAX_VERSION = 10**9
"""Versions above this are refused before any read (a version is a count of changes)."""
MAX_QUESTION_CHARS = 2000
"""A question longer than this is refused: build_prompt's work grows with the text (up to its term caps)."""
READER: web.AppKey[InspectReader] = web.AppKey("reader", InspectReader)
HEADERS = {
    # no script may run even if escaping ever failed; styles are inline; forms post only here
    "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}
LOOPBACK_NAMES = ("localhost",)
_SESSION_KEY = re.compile(SAFE_ID)
_VERSION = re.compile(r"[0-9]{1,10}")
_PREFIX = re.compile(TOPIC_PREFIX_PATTERN)
DIFF_SESSIONS = 20
"""Sessions the diff page samples (`turnstream diff`'s default)."""

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def is_loopback(host: str) -> bool:
    """Whether `host` (a name or an address, IPv6 with or without brackets) only answers on this machine."""
    if host.lower() in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def token_matches(authorization: str, token: str) -> bool:
    """`Authorization: Bearer <token>` (programs), or Basic with the token as password (a browser's own prompt)."""
    scheme, _, value = authorization.partition(" ")
    if scheme.lower() == "basic":
        try:
            value = base64.b64decode(value.strip(), validate=True).decode().partition(":")[2]
        except (binascii.Error, UnicodeDecodeError):
            return False
    elif scheme.lower() != "bearer":
        return False
    return hmac.compare_digest(value.strip().encode(), token.encode())


def _page(status: int, message: str, headers: dict[str, str] | None = None) -> web.Response:
    return web.Response(status=status, text=error_page(status, message), content_type="text/html", headers=headers)


def guard(token: str | None) -> Middleware:
    """The middleware: the token on every request when one is set; without one (loopback only) the Host header
    must name this machine, so a web page elsewhere cannot read sessions through DNS rebinding."""

    @web.middleware
    async def middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
        if token is not None:
            if not token_matches(request.headers.get("Authorization", ""), token):
                return _page(
                    401,
                    "a token is required (TURNSTREAM_INSPECT_TOKEN): send it as a Bearer token, "
                    "or as the password when the browser asks",
                    {"WWW-Authenticate": 'Basic realm="turnstream inspect", charset="UTF-8"', **HEADERS},
                )
        elif not is_loopback(request.url.host or ""):
            return _page(403, "this inspector answers to loopback host names only", HEADERS)
        try:
            response = await handler(request)
        except web.HTTPException as error:
            response = _page(error.status, error.reason)
        except REDIS_UNAVAILABLE as error:
            response = _page(503, f"cannot reach Redis: {error}")
        except ValidationError as error:
            response = _page(
                500, f"the stored context does not validate as this version's ContextDoc: {error.errors()[0]['msg']}"
            )
        except Exception:  # the page says little; the log has the details
            log.exception("inspect: %s failed", request.path)
            response = _page(500, "internal error; the inspector's log has the details")
        response.headers.update(HEADERS)
        return response

    return middleware


async def sessions(request: web.Request) -> web.Response:
    query = request.query.get("q", "").strip()
    if len(query) > MAX_SEARCH_CHARS:
        return _page(400, f"search text longer than {MAX_SEARCH_CHARS} characters")
    found = await request.app[READER].sessions(query)
    rows = session_rows(found.docs, query)
    return web.Response(text=list_page(rows, query, found.complete, found.unreadable), content_type="text/html")


async def session(request: web.Request) -> web.Response:
    key = request.match_info["key"]
    question = request.query.get("q", "").strip()
    if len(question) > MAX_QUESTION_CHARS:
        return _page(400, f"question longer than {MAX_QUESTION_CHARS} characters")
    reader = request.app[READER]
    found = await reader.session(key) if _SESSION_KEY.match(key) and len(key) <= 200 else None
    if found is None:
        return _page(404, f"no context in Redis for session {key!r}")
    owner, doc = found
    dropped = await reader.archived(owner, doc.session_key, dropped_positions(doc)[-MAX_DROPPED_SHOWN:])
    # what build_prompt returns for the question in this session, recording nothing (no dedup window counted)
    memory = GatewayMemory(reader.redis, reader.settings)
    prompt = (
        await memory.build_prompt(doc.session_key, owner, question, record=False, provenance=True) if question else None
    )
    user = user_of(owner, doc.session_key, doc.tenant)
    rebuilds = reader.settings.kafka_url is not None
    view = SessionView(owner, user, doc, await reader.owner(owner), dropped, question, prompt, rebuilds)
    return web.Response(text=session_page(view), content_type="text/html")


async def version(request: web.Request) -> web.Response:
    """The session's context at version `v`, rebuilt from the turns topic (operations/rebuild.py)."""
    key, reader = request.match_info["key"], request.app[READER]
    asked = request.query.get("v", "")
    if not _VERSION.fullmatch(asked) or not 1 <= int(asked) <= MAX_VERSION:
        return _page(400, "v must be a version number, 1 or more")
    if reader.settings.kafka_url is None:
        return _page(404, "no broker configured (TURNSTREAM_KAFKA_URL): earlier versions cannot be rebuilt")
    found = await reader.session(key) if _SESSION_KEY.match(key) and len(key) <= 200 else None
    if found is None:
        return _page(404, f"no context in Redis for session {key!r}")
    try:
        result = await rebuild_beside(reader.settings, key, Target(version=int(asked)), found[1])
    except NotInLog as error:
        return _page(404, str(error))
    except (LogUnreadable, KafkaError) as error:
        return _page(503, f"cannot read the turns topic: {error}")
    comparison, _ = verdict(result, reader.settings.budget_tokens, reader.settings.turns_topic)
    view = VersionView(result.doc, result.rebuilt.latest, comparison)
    return web.Response(text=version_page(view), content_type="text/html")


async def shadow_diff(request: web.Request) -> web.Response:
    """The live prompts against shadow NAME's, for a sample of sessions (operations/diff.py, `turnstream diff`)."""
    name, reader = request.match_info["name"], request.app[READER]
    if reader.settings.kafka_url is None:
        return _page(404, "no broker configured (TURNSTREAM_KAFKA_URL): the questions are read from the turns topic")
    if not _PREFIX.match(name):
        return _page(400, "a shadow's name is a key prefix: up to 100 letters, digits, '.', '_' or '-'")
    shadow = reader.settings.model_copy(update={"topic_prefix": name})
    try:
        sessions = await compare(reader.settings, shadow, DiffPlan(DIFF_SESSIONS))
    except DiffRefused as error:
        return _page(404, str(error))
    except (LogUnreadable, KafkaError) as error:
        return _page(503, f"cannot read the turns topic: {error}")
    return web.Response(text=diff_page(reader.settings.topic_prefix, name, sessions), content_type="text/html")


def build_app(reader: InspectReader, token: str | None) -> web.Application:
    """The inspector over `reader`; `token` (None: no token, loopback only) is asked of every request."""
    app = web.Application(middlewares=[guard(token)])
    app[READER] = reader
    app.router.add_get("/", sessions)
    app.router.add_get("/sessions/{key}", session)
    app.router.add_get("/sessions/{key}/versions", version)
    app.router.add_get("/diff/{name}", shadow_diff)
    return app
