"""The context document: one session's compacted context, as stored in Redis and read by gateways."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import fields as dataclass_fields
from typing import Any

import orjson
from pydantic import BaseModel, ConfigDict, Field

from turnstream.schemas.ids import session_key
from turnstream.schemas.token_counts import TokenCounts
from turnstream.schemas.turn import SAFE_ID, SAFE_TENANT, MessageField

_RECORD = ConfigDict(frozen=True, use_attribute_docstrings=True)


class ContextFact(BaseModel):
    """One piece of key information taken from dropped turns; strategies may add fields."""

    model_config = ConfigDict(frozen=True, use_attribute_docstrings=True, extra="allow")

    type: str
    """fact, preference, event, constraint or failure."""
    text: str
    """The information itself, as a short standalone sentence."""
    key: str | None = None
    """The slot it fills ("budget", "pref:aisle-seats"): a restatement or a correction of it replaces it."""
    source_seq: int | None = None
    """The position in the conversation of the message it was taken from."""


class ContextDoc(BaseModel):
    """The compaction result of one session plus where it stands; written only with a newer version."""

    model_config = _RECORD | ConfigDict(title="ContextDoc")

    session_id: str = Field(min_length=1, max_length=128, pattern=SAFE_ID)
    """The session this context belongs to."""
    tenant: str | None = Field(None, min_length=1, max_length=64, pattern=SAFE_TENANT)
    """The session's tenant, if any."""
    version: int = Field(ge=0)
    """Grows with every state change of the session; Redis never moves to a smaller one."""
    last_turn_id: str
    """The newest turn this context includes."""
    updated_at: float
    """When this version was computed, epoch seconds."""
    messages: list[MessageField]
    """Ready to send to a chat model: anchors, marker, summary/facts block, kept tail."""
    positions: list[int | None] = Field(default_factory=list)
    """Each message's position in the session's conversation (0-based), null for the marker and the summary
    block: which turns the context shows, so recall does not repeat them (empty in documents written before it)."""
    message_tokens: list[int] = Field(default_factory=list)
    """Each message's token cost (tiktoken cl100k_base, chat overhead included), so readers need not count again."""
    language: str | None = None
    """The conversation's language ("en", "zh"), as the marker speaks it."""
    marker_index: int | None = None
    """Index in `messages` of the "history compressed" marker, or null when nothing was dropped."""
    dropped: int = Field(0, ge=0)
    """How many messages were compacted away."""
    summary: str = ""
    """Rolling summary of the dropped history."""
    facts: list[ContextFact] = Field(default_factory=list)
    """Key information kept from the dropped history."""
    tokens: TokenCounts
    """Token counts before and after compaction, and the budget."""
    timings: dict[str, float] = Field(default_factory=dict)
    """Per-stage milliseconds (broker_wait, ingest, compaction, redis_write, ...)."""

    @property
    def session_key(self) -> str:
        """The Redis identity of the session, as Turn.session_key."""
        return session_key(self.session_id, self.tenant)

    def to_json(self) -> bytes:
        """Compact JSON, as stored in Redis."""
        return orjson.dumps(self.model_dump())

    @classmethod
    def from_json(cls, data: bytes | str) -> ContextDoc:
        return cls.model_validate_json(data)


@dataclass(frozen=True, slots=True)
class EncodedContext:
    """A context document as the worker writes it: encoded once from the session core's own state, whose parts
    the decoder and the compactor checked already. ContextDoc validates what readers parse; building one per
    written document cost the worker more than the rest of the encoding (encode_context)."""

    session_key: str
    version: int
    last_turn_id: str
    json: bytes

    def to_json(self) -> bytes:
        """The document's bytes, as ContextDoc(**fields).to_json() writes them."""
        return self.json


_FACT_FIELDS = tuple(ContextFact.model_fields)
"""A fact's fields in the model's order; a strategy's own fields (extra="allow") follow them."""
_TOKEN_FIELDS = tuple(field.name for field in dataclass_fields(TokenCounts))


def encode_context(fields: Mapping[str, Any]) -> EncodedContext:
    """The document of `fields`, every ContextDoc field given, with the bytes ContextDoc(**fields).to_json() gives:
    fields (a fact's too) in the model's order and its float fields as floats (tests/unit/schemas/test_encoded_context.py holds
    the two to the same bytes); a field missing here is a KeyError, not a document without it."""
    data = {name: fields[name] for name in ContextDoc.model_fields}
    data["facts"] = [{**dict.fromkeys(_FACT_FIELDS), **fact} for fact in data["facts"]]
    data["tokens"] = {name: data["tokens"][name] for name in _TOKEN_FIELDS}
    data["updated_at"] = float(data["updated_at"])
    data["timings"] = {stage: float(ms) for stage, ms in data["timings"].items()}
    return EncodedContext(
        session_key(data["session_id"], data["tenant"]), data["version"], data["last_turn_id"], orjson.dumps(data)
    )
