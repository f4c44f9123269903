"""The HTTP API's request and reply bodies: the SDK's own records (Turn, ContextDoc, Prompt and what it holds)
wrapped where HTTP needs a wrapper; routes.py names them per endpoint and openapi.py publishes them."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from turnstream.prompt.assemble import RecalledMemory
from turnstream.prompt.recalled import ArchivedTurn
from turnstream.schemas.turn import Turn

MAX_TURNS = 100
"""Turns one record request takes: they are produced and waited for together."""
MAX_WAIT_SECONDS = 60.0
"""Longest wait a record request may ask for: a request holds a connection while it waits."""
MAX_TEXT_CHARS = 8000
"""Longest question or search text: the read's work grows with it (up to its term caps)."""
_BODY = ConfigDict(extra="forbid", use_attribute_docstrings=True)


class RecordRequest(BaseModel):
    """Turns of the path's session, produced in order; the reply once the context includes the last one."""

    model_config = _BODY | ConfigDict(title="RecordRequest")

    turns: list[Turn] = Field(min_length=1, max_length=MAX_TURNS)
    """The turns, oldest first, each of the path's session; `tenant` may be left out (it is the token's)."""
    timeout_seconds: float | None = Field(None, gt=0, le=MAX_WAIT_SECONDS)
    """How long to wait for the broker and then the context; default TURNSTREAM_RECORD_TIMEOUT_SECONDS."""


class RecordReply(BaseModel):
    """Where the session's context stands after a record: 200 when it includes the last turn, else 202."""

    model_config = ConfigDict(use_attribute_docstrings=True, title="RecordReply")

    fresh: bool
    """True when the context includes the last turn recorded; False when the wait ran out first."""
    version: int | None
    """The version of that context (fresh), or of the latest there is (not fresh; null while the session has none)."""
    detail: str | None = None
    """Not fresh: why, when the API knows: turns have waited a while and no worker has applied any (none runs, or
    it runs under another topic prefix); null otherwise, as while a running worker is only behind."""


class PromptRequest(BaseModel):
    """A question about to be asked in a session: the prompt for it (build_prompt)."""

    model_config = _BODY | ConfigDict(title="PromptRequest")

    text: str = Field(min_length=1, max_length=MAX_TEXT_CHARS)
    """The user's new message, as they wrote it."""
    user_id: str | None = Field(None, min_length=1, max_length=128)
    """The user asking: their memories and archive are recalled (without it the session's owner is looked up)."""
    budget_tokens: int | None = Field(None, ge=64, le=1_000_000)
    """Token budget of the whole prompt; default TURNSTREAM_PROMPT_BUDGET_TOKENS."""
    k: int | None = Field(None, ge=0, le=50)
    """Typed memories recalled at most; default TURNSTREAM_RECALL_K."""
    record: bool = True
    """Count the memories given against the session's dedup window; false only looks. A session without a context
    (new, erased) records nothing either way."""
    provenance: bool = False
    """Also return `sources`: per prompt message, what it was drawn from (turns by position, facts, the summarized
    span, memories, archived turns with their recall scores)."""


class SearchRequest(BaseModel):
    """What recall finds for a text among a user's (or an anonymous session's) memories and archived turns."""

    model_config = _BODY | ConfigDict(title="SearchRequest")

    text: str = Field(min_length=1, max_length=MAX_TEXT_CHARS)
    """What to look for, in the words a user would use."""
    user_id: str | None = Field(None, min_length=1, max_length=128)
    """Search this user's memories and archive."""
    session_id: str | None = Field(None, min_length=1, max_length=128)
    """Instead of a user: the memories of this session's turns without a user."""
    k: int | None = Field(None, ge=0, le=50)
    """Typed memories returned at most; default TURNSTREAM_RECALL_K."""
    budget_tokens: int | None = Field(None, ge=16, le=100_000)
    """Tokens the found memories and dated turns may take; default TURNSTREAM_RECALL_BUDGET_TOKENS."""

    @model_validator(mode="after")
    def _one_owner(self) -> SearchRequest:
        if (self.user_id is None) == (self.session_id is None):
            raise ValueError("give user_id or session_id, exactly one")
        return self


class SearchReply(BaseModel):
    """Found memories, best first, and archived turns in time order with their scores; nothing is recorded."""

    model_config = ConfigDict(use_attribute_docstrings=True, title="SearchReply")

    recalled: list[RecalledMemory]
    """Typed memories that match, best first."""
    archived: list[ArchivedTurn]
    """Archived turns that match and their neighbours, in time order, each with its date and score."""


class EraseReply(BaseModel):
    """What an erasure removed (or, with dry_run, would remove), per kind."""

    model_config = ConfigDict(use_attribute_docstrings=True, title="EraseReply")

    erased: str
    """What was erased: `user <owner key>` or `session <session key>`."""
    dry_run: bool
    """True when nothing was changed."""
    counts: dict[str, int]
    """How many of each kind went: contexts, memories, archive entries, Table rows, ..."""


class ErrorReply(BaseModel):
    """Every non-2xx reply."""

    model_config = ConfigDict(use_attribute_docstrings=True, title="ErrorReply")

    error: Literal["unauthorized", "not_found", "invalid_request", "too_large", "unavailable", "internal"]
    """A code a client can branch on."""
    detail: str
    """What went wrong, for a person."""
    field: str | None = None
    """The request field at fault (pydantic's location, dotted: `turns.0.message`), for invalid_request."""
    acknowledged: bool | None = None
    """For a record refused with unavailable: whether the broker acknowledged every turn (retrying with the same
    turn ids is safe either way: the worker applies a turn id once)."""


class LiveReply(BaseModel):
    model_config = ConfigDict(title="LiveReply")

    live: bool


class ReadyReply(BaseModel):
    """Readiness: the broker producer is connected and Redis answers. A worker that applies nothing is said, and
    leaves the API ready: it still takes turns (the broker keeps them for the worker) and answers reads."""

    model_config = ConfigDict(use_attribute_docstrings=True, title="ReadyReply")

    ready: bool
    broker: bool
    """The producer is connected to the broker."""
    redis: bool
    """Redis answered a PING just now."""
    worker: bool | None = None
    """A worker applies the recorded turns: false when turns have waited a few seconds and no worker has applied
    any; null while the API cannot see the worker's consumer group (the broker away, or no turns topic yet)."""
    detail: str | None = None
    """When `worker` is false, what to do about it, for a person."""
