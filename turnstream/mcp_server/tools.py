"""The MCP tools: a session's prompt, archive search, a note as a typed memory, erasure. Each calls what the SDK
and `turnstream forget` call (ContextClient.build_prompt, MemoryStore.search, streams.notes, streams.erasure); the
descriptions are written for the model that picks among them."""

from __future__ import annotations

import time
from typing import Any, Literal

from mcp.server.mcpserver import Context, MCPServer
from mcp.types import ToolAnnotations

from turnstream import __version__
from turnstream.client import ContextClient
from turnstream.mcp_server.auth import TENANT_STATE
from turnstream.memory.extract import note_memory
from turnstream.schemas.ids import session_key
from turnstream.serve.scope import Scope, nothing_to_erase, owner_for
from turnstream.settings import Settings
from turnstream.streams.erasure import erase
from turnstream.streams.notes import record_note

INSTRUCTIONS = (
    "Long-term memory for conversations: get_prompt gives the compacted context of a session plus what the user said "
    "before that bears on the question; search_memory finds older turns and memories by words; remember stores a note "
    "for later conversations; erase forgets a user or a session for good."
)
NOT_FOUND = "no such session or user"


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
        if budget_tokens is not None and budget_tokens < 64:
            raise ValueError("budget_tokens must be at least 64")
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
        scope = tools.scope(ctx)
        memory = tools.context.memory
        assert memory is not None  # ContextClient.from_settings builds it
        found = await memory.search(owner_for(scope, user_id, session_id), query, None, max(budget_tokens, 16))
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
        text = text.strip()
        if not text or len(text) > 2000:
            raise ValueError("text must be 1 to 2000 characters")
        scope = tools.scope(ctx)
        owner = owner_for(scope, user_id, session_id)
        source = session_key(session_id, scope.tenant) if session_id else ""
        memory = note_memory(owner, text, type, source, time.time())
        assert tools.context.memory is not None
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
        if (user_id is None) == (session_id is None):
            raise ValueError("give user_id or session_id, exactly one")
        scope = tools.scope(ctx)
        what, counts = await erase(tools.settings, user=user_id, session=session_id, tenant=scope.tenant, dry_run=True)
        if nothing_to_erase(counts):
            raise LookupError(NOT_FOUND)
        if not dry_run:
            what, counts = await erase(
                tools.settings, user=user_id, session=session_id, tenant=scope.tenant, dry_run=False
            )
        return {"erased": what, "dry_run": dry_run, "counts": dict(counts)}

    return server
