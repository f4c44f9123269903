"""The one prompt read, without I/O: a prompt (or a search) composed over its read plan.

A read is a generator: it prepares the query (prompt/query.py), yields the plan of its one round trip, is sent
what that round trip returned, and returns the assembled Prompt (prompt/assemble.py). The plan comes from `plan`,
the caller's: the recall script's call for the owner and session it names, and how its reply decodes
(redis/recall.py's recall_read). An executor runs it, asyncio (redis/aio.py) or blocking (redis/blocking.py):
both clients, the HTTP API, the MCP server and the recall tool compose their prompts here, and only here.

The read's data (RecallAsk, RecallResult and theirs) lie beneath this package and redis/, in
schemas/prompt_read.py; they are named here too.
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from typing import TypeVar

from turnstream.prompt.assemble import Prompt, budgeted, finish_prompt, search_settings
from turnstream.prompt.query import PromptQuery, prompt_query
from turnstream.prompt.semantic import Semantic
from turnstream.schemas.prompt_read import ArchiveQuery, PoolEntry, RecallAsk, Recalled, RecallResult
from turnstream.settings import MemorySettings

__all__ = [
    "ArchiveQuery",
    "PoolEntry",
    "PromptRead",
    "RecallAsk",
    "RecallResult",
    "Recalled",
    "build_prompt",
    "search",
]

P = TypeVar("P")
PromptRead = Generator[P, RecallResult, Prompt]
"""A read in the making: it yields the plan of its round trip (P, the caller's), is sent the decoded result."""


def build_prompt(
    plan: Callable[[RecallAsk], P],
    user_text: str,
    k: int | None,
    settings: MemorySettings,
    semantic: Semantic | None = None,
    record: bool = True,
    budget_tokens: int | None = None,
    provenance: bool = False,
) -> PromptRead[P]:
    """The prompt for a session's next model call: its context, the owner's profile, memories and archive read in
    one round trip, assembled within the prompt budget.

    With `record`, the memories given are counted against the session's dedup window (once the session has a
    context: a prompt for a new or erased session records nothing); memories then dropped for the budget stay
    counted: that only happens when the context nearly fills the prompt budget, and undoing it would cost a
    second round trip. Archived turns have no dedup window: the context itself says what the model has seen, and a
    question asked twice needs its answer twice. `k` defaults to settings.recall_k; `budget_tokens` replaces
    settings.prompt_budget_tokens for this prompt; `provenance` adds each message's sources (prompt/provenance.py).
    """
    settings = budgeted(settings, budget_tokens)
    return _read(plan, prompt_query(user_text, k, settings, semantic, provenance), settings, semantic, record)


def search(
    plan: Callable[[RecallAsk], P],
    text: str,
    k: int | None,
    settings: MemorySettings,
    semantic: Semantic | None = None,
    budget_tokens: int | None = None,
) -> PromptRead[P]:
    """What recall finds for `text` among an owner's memories and archived turns (no session: the plan names
    none); nothing is recorded against any dedup window. `budget_tokens` bounds the memory block (default
    settings.recall_budget_tokens)."""
    settings = search_settings(settings, text, budget_tokens)
    return _read(plan, prompt_query(text, k, settings, semantic), settings, semantic, False)


def _read(
    plan: Callable[[RecallAsk], P],
    query: PromptQuery,
    settings: MemorySettings,
    semantic: Semantic | None,
    record: bool,
) -> PromptRead[P]:
    result = yield plan(RecallAsk(query.keywords, query.k, query.archive, record))
    return finish_prompt(query, result, settings, semantic)
