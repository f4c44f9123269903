"""What both context clients decide without I/O: the session and owner a call names, the prompt read they run, and
what a wait found.

ContextClient (asyncio) and SyncContextClient (threads) run the same reads (redis/reads.py) and the same prompt
read (prompt/read.py over redis/recall.py's plan); what a call names lives here so the two cannot drift apart.
"""

from __future__ import annotations

from dataclasses import dataclass

from turnstream.prompt import read
from turnstream.prompt.read import PromptRead
from turnstream.prompt.semantic import Semantic
from turnstream.redis.keys import KeyLayout
from turnstream.redis.reads import Read
from turnstream.redis.recall import recall_plan
from turnstream.schemas.context import ContextDoc
from turnstream.schemas.ids import owner_key, session_key
from turnstream.schemas.prompt_read import RecallResult
from turnstream.settings import Settings


@dataclass(frozen=True, slots=True)
class WaitResult:
    """What wait_for found."""

    doc: ContextDoc | None
    """The latest context of the session (None when it has none yet)."""
    fresh: bool
    """True when `doc` includes the awaited turn; False when the wait timed out first."""


def gateway_semantic(settings: Settings) -> Semantic | None:
    """The semantic share a gateway reads with: none when embeddings are off (nothing of numpy or the model is
    imported then), the model's ranking with local models, the question's own terms otherwise."""
    if settings.embeddings == "off":
        return None
    from turnstream.client.semantic import semantic_side

    return semantic_side(settings)


def session_and_owner(session_id: str, tenant: str | None, user_id: str | None) -> tuple[str, str | None]:
    """The session key, and the owner when the caller named the user (else it is looked up: a round trip more)."""
    key = session_key(session_id, tenant)
    return key, owner_key(user_id, tenant, session_id) if user_id else None


def search_owner(user_id: str | None, session_id: str | None, tenant: str | None) -> str:
    """The owner a search reads: the user (`tenant:user_id`) when named, else the session's own owner (a session
    without a user keeps its memories apart from every user's); ValueError when neither is named."""
    if not user_id and not session_id:
        raise ValueError("a search names user_id or session_id")
    return owner_key(user_id, tenant, session_id or "")


GatewayRead = PromptRead[Read[RecallResult]]
"""The prompt read as a gateway runs it: its plan is the recall script's call (redis/recall.py)."""


def prompt_read(
    layout: KeyLayout,
    settings: Settings,
    semantic: Semantic | None,
    key: str,
    owner: str,
    user_text: str,
    k: int | None,
    record: bool,
    budget_tokens: int | None,
    provenance: bool = False,
) -> GatewayRead:
    """The one prompt read (prompt/read.py's build_prompt) of session `key` and its `owner`, for an executor to run."""
    plan = recall_plan(layout, settings, owner, key)
    return read.build_prompt(plan, user_text, k, settings, semantic, record, budget_tokens, provenance)


def search_read(
    layout: KeyLayout,
    settings: Settings,
    semantic: Semantic | None,
    owner: str,
    text: str,
    k: int | None,
    budget_tokens: int | None,
) -> GatewayRead:
    """The one search read (prompt/read.py's search) among `owner`'s memories and archived turns."""
    return read.search(recall_plan(layout, settings, owner, ""), text, k, settings, semantic, budget_tokens)
