"""The MCP tools: a session's prompt, archive search, a note as a typed memory, erasure. Each calls what the SDK,
`turnstream forget` and the HTTP API call (ContextClient.build_prompt, GatewayMemory.search, streams.notes,
serve.service.erase_found); the descriptions are written for the model that picks among them.

A failure the HTTP API answers with a 4xx or a 503 (serve/errors.py) is a tool error here, with the API's words:
the model reads what to change or that it may retry, and the SDK logs it on one line. Anything else is a crash,
which the SDK logs with its traceback and shows the model only as "Error executing tool <name>"."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, Literal

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations

from turnstream import __version__
from turnstream.client import ContextClient
from turnstream.mcp_server.auth import TENANT_STATE
from turnstream.memory.extract import note_memory
from turnstream.operations.notes import record_note
from turnstream.schemas.ids import session_key
from turnstream.serve.errors import InvalidRequest, failure_of
from turnstream.serve.scope import Scope, owner_for
from turnstream.serve.service import erase_found
from turnstream.settings import Settings

INSTRUCTIONS = (
    "Long-term memory for conversations: get_prompt gives the compacted context of a session plus what the user said "
    "before that bears on the question; search_memory finds older turns and memories by words; remember stores a note "
    "for later conversations; erase forgets a user or a session for good."
)


class Tools:
    """The tools' clients, on the server's settings; `tenant` is the stdio transport's (HTTP: each token's)."""

    def __init__(self, settings: Settings, tenant: str | None) -> None:
        self.settings = settings
        self.tenant = tenant
        self.context = ContextClient.from_settings(settings)

    def scope(self, ctx: Context) -> Scope:
        """The stdio transport's tenant, or the one the request's token maps to (auth.with_tenants put it there)."""
        request = ctx.request_context.request
        return Scope(self.tenant) if request is None else Scope(_tenant_of(request))

    async def aclose(self) -> None:
        await self.context.aclose()


def _tenant_of(request: Any) -> str:
    tenant = request.scope.get("state", {}).get(TENANT_STATE)
    if not tenant:
        raise PermissionError("no tenant on this request")  # with_tenants refuses such requests before any tool runs
    return str(tenant)


def tool_error(error: Exception) -> ToolError | None:
    """The tool error `error` is for the model (its field, then what is wrong), or None for a crash (pure)."""
    failure = failure_of(error)
    if failure.status == 500:
        return None
    return ToolError(f"{failure.body.field}: {failure.body.detail}" if failure.body.field else failure.body.detail)


@contextmanager
def expected_errors() -> Iterator[None]:
    """Around a tool's body: what tool_error knows raised as the SDK's ToolError, anything else as it is."""
    try:
        yield
    except ToolError:
        raise
    except Exception as error:
        if (answer := tool_error(error)) is None:
            raise
        raise answer from error


def build_server(tools: Tools) -> MCPServer:
    server = MCPServer("turnstream", version=__version__, instructions=INSTRUCTIONS)

    @server.tool(annotations=ToolAnnotations(readOnlyHint=False, openWorldHint=False))
    async def get_prompt(
        session_id: str, question: str, ctx: Context, user_id: str | None = None, budget_tokens: int | None = None
    ) -> dict[str, Any]:
        """Build the prompt for the next model call of a conversation, instead of replaying its whole history: the
        session's compacted context (pinned instructions, a summary and key facts of what was compacted away, the
        recent turns) plus a memory block of what the user said before that bears on `question`, all within
        `budget_tokens` (default: the server's prompt budget). `question` is the user's new message as written.
        Returns `messages`, ready to send with the question last, and the memories and dated turns recalled into
        it. Memories shown are not shown again in the next few prompts of the session."""
        with expected_errors():
            if budget_tokens is not None and budget_tokens < 64:
                raise InvalidRequest("budget_tokens", "at least 64")
            scope = tools.scope(ctx)
            prompt = await tools.context.build_prompt(
                session_id, question, tenant=scope.tenant, user_id=user_id, budget_tokens=budget_tokens
            )
        return {"messages": prompt.messages, "recalled": prompt.recalled, "archived": prompt.archived}

    @server.tool(name="search_memory", annotations=ToolAnnotations(readOnlyHint=True, openWorldHint=False))
    async def search_memory_tool(
        query: str, ctx: Context, user_id: str | None = None, session_id: str | None = None, budget_tokens: int = 1000
    ) -> dict[str, Any]:
        """Search what a user said in earlier conversations (or, with session_id and no user, what one session
        said). Write `query` as the words the answer would contain (names, places, dates, numbers), not as a
        question. Returns typed memories and the best-matching turns with their neighbours, each line dated and
        attributed (`[8 May 2023] Maya: ...`), in time order, as many as fit in `budget_tokens`. Use it when the
        user refers to something from before that the current context does not show. Changes nothing."""
        memory = tools.context.memory
        assert memory is not None  # ContextClient.from_settings builds it
        with expected_errors():
            owner = owner_for(tools.scope(ctx), user_id, session_id)
            found = await memory.search(owner, query, None, max(budget_tokens, 16))
        return {"memories": found.recalled, "turns": [turn["line"] for turn in found.archived]}

    @server.tool(
        annotations=ToolAnnotations(readOnlyHint=False, destructiveHint=False, idempotentHint=True, openWorldHint=False)
    )
    async def remember(
        text: str,
        ctx: Context,
        type: Literal["fact", "preference", "event"] = "fact",
        user_id: str | None = None,
        session_id: str | None = None,
    ) -> dict[str, Any]:
        """Store a note as a long-term memory of a user (or, with session_id and no user, of one session): one
        short standalone sentence that makes sense later on its own, e.g. "Maya is allergic to peanuts." Pick
        `type`: fact (something true about them), preference (what they like or want), event (something that
        happened, with its date). It is recalled into later prompts and searches when relevant and survives
        restarts; the same note twice is stored once. For what the user asks you to remember or what will matter
        later, not for the conversation itself (its turns are kept already)."""
        assert tools.context.memory is not None
        with expected_errors():
            text = text.strip()
            if not text or len(text) > 2000:
                raise InvalidRequest("text", "1 to 2000 characters")
            scope = tools.scope(ctx)
            owner = owner_for(scope, user_id, session_id)
            source = session_key(session_id, scope.tenant) if session_id else ""
            memory = note_memory(owner, text, type, source, time.time())
            await record_note(tools.settings, tools.context.memory, memory)
        return {"id": memory.id, "type": memory.type, "text": memory.text}

    @server.tool(
        annotations=ToolAnnotations(readOnlyHint=False, destructiveHint=True, idempotentHint=True, openWorldHint=False)
    )
    async def erase_memory(
        ctx: Context, user_id: str | None = None, session_id: str | None = None, dry_run: bool = False
    ) -> dict[str, Any]:
        """Permanently erase a user (every session, memory, profile and archived turn of theirs) or, with session_id
        alone, one session. Only when the user explicitly asks to be forgotten or to delete a conversation; with
        dry_run=true it only says what would go. Cannot be undone."""
        with expected_errors():
            if (user_id is None) == (session_id is None):
                raise InvalidRequest(None, "give user_id or session_id, exactly one")
            tenant = tools.scope(ctx).tenant
            what, counts = await erase_found(
                tools.settings, user=user_id, session=session_id, tenant=tenant, dry_run=dry_run
            )
        return {"erased": what, "dry_run": dry_run, "counts": dict(counts)}

    return server
