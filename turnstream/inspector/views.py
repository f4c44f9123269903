"""What the inspector shows, as plain data made from context documents (pure: no Redis, no HTML).

The Redis reads are in reader.py, the markup in pages.py; everything here is a function of its
arguments, so the rules (which key is which session, what a search finds, where the context's
parts start, how wide a bar is) are unit-tested with plain documents.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime

from turnstream.schemas.context import ContextDoc
from turnstream.text.chat import Message
from turnstream.text.tokens import count_message


@dataclass(frozen=True, slots=True)
class SessionRow:
    """One line of the session list."""

    session_key: str
    session_id: str
    tenant: str | None
    owner: str
    user: str | None
    """The user whose memories the session shares; None when the session owns its own (no user)."""
    version: int
    turns: int
    """Turns applied: the newest message's position + 1 (the version, for documents without positions)."""
    naive_tokens: int
    compacted_tokens: int
    budget: int
    updated_at: float


def user_of(owner: str, session_key: str, tenant: str | None) -> str | None:
    """The user id inside an owner key (`tenant:user` or `user`); None when the session is its own owner."""
    if owner == session_key:
        return None
    return owner.removeprefix(f"{tenant}:") if tenant else owner


def turns_applied(doc: ContextDoc) -> int:
    known = [p for p in doc.positions if p is not None]
    return max(known) + 1 if known else doc.version


def session_row(owner: str, doc: ContextDoc) -> SessionRow:
    return SessionRow(
        doc.session_key,
        doc.session_id,
        doc.tenant,
        owner,
        user_of(owner, doc.session_key, doc.tenant),
        doc.version,
        turns_applied(doc),
        doc.tokens.before,
        doc.tokens.after,
        doc.tokens.budget,
        doc.updated_at,
    )


def matches(row: SessionRow, query: str) -> bool:
    """Whether the session id, user or tenant hold `query`, ignoring case (an empty query matches all)."""
    needle = query.strip().casefold()
    return not needle or any(needle in field.casefold() for field in (row.session_id, row.user or "", row.tenant or ""))


def session_rows(found: Iterable[tuple[str, ContextDoc]], query: str = "") -> list[SessionRow]:
    """The list's rows, newest update first: one per session (a session that learned its user late may still
    have its old document under its own key until it expires: the newer version wins)."""
    best: dict[str, tuple[str, ContextDoc]] = {}
    for owner, doc in found:
        kept = best.get(doc.session_key)
        if kept is None or doc.version > kept[1].version:
            best[doc.session_key] = (owner, doc)
    rows = [session_row(owner, doc) for owner, doc in best.values()]
    return sorted((r for r in rows if matches(r, query)), key=lambda r: (-r.updated_at, r.session_key))


def bar_percent(value: float, scale: float) -> float:
    """`value` as a share of `scale`, in percent, within 0..100 (0 when there is no scale)."""
    if scale <= 0 or value <= 0:
        return 0.0
    return min(100.0, value * 100.0 / scale)


@dataclass(frozen=True, slots=True)
class Shown:
    """One message of a context, with what it costs and where it came from."""

    message: Message
    tokens: int
    position: int | None


@dataclass(frozen=True, slots=True)
class Part:
    """A run of the context the model reads as one thing."""

    kind: str
    """anchor, marker, block (summary and key facts) or tail."""
    title: str
    messages: list[Shown]

    @property
    def tokens(self) -> int:
        return sum(m.tokens for m in self.messages)


def context_parts(doc: ContextDoc) -> list[Part]:
    """The context as the model gets it: anchors, the "history compressed" marker, the summary/facts block,
    the recent tail; parts with no message left out.

    Without a marker nothing was dropped: the anchors are the leading system messages and the first
    user message, as the compactor pins them, and the rest is the tail.
    """
    messages = doc.messages
    costs = doc.message_tokens if len(doc.message_tokens) == len(messages) else [count_message(m) for m in messages]
    positions = doc.positions if len(doc.positions) == len(messages) else [None] * len(messages)
    shown = [Shown(m, c, p) for m, c, p in zip(messages, costs, positions)]
    if doc.marker_index is not None:
        marker = doc.marker_index
        block_end = marker + 1
        if (doc.summary or doc.facts) and block_end < len(messages) and messages[block_end].get("role") == "system":
            block_end += 1
        parts = [
            Part("anchor", "anchors (pinned)", shown[:marker]),
            Part("marker", "history compressed", shown[marker : marker + 1]),
            Part("block", "summary and key facts", shown[marker + 1 : block_end]),
            Part("tail", "recent tail", shown[block_end:]),
        ]
    else:
        first_user = next((i + 1 for i, m in enumerate(messages) if m.get("role") == "user"), 0)
        parts = [
            Part("anchor", "anchors (pinned)", shown[:first_user]),
            Part("tail", "recent tail", shown[first_user:]),
        ]
    return [part for part in parts if part.messages]


def dropped_positions(doc: ContextDoc) -> list[int]:
    """Conversation positions the context no longer shows (compacted away), oldest first."""
    known = {p for p in doc.positions if p is not None}
    return [p for p in range(max(known) + 1) if p not in known] if known else []


def when(ts: float) -> str:
    """An epoch time as `2026-11-30 04:12:05 UTC`."""
    return datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
