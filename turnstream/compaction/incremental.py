"""Incremental compaction of one session: the batch rules fed a turn at a time, and a compact byte form."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import orjson

from turnstream.compaction.compactor import Entry, Unit, Window
from turnstream.compaction.messages import CallTracker
from turnstream.compaction.strategies.base import ArchivedTurn, Digest, Fact, Strategy
from turnstream.errors import TurnstreamError
from turnstream.text.chat import Message, call_ids
from turnstream.text.language import LanguageTally

_FORMAT = 1


def _entry_row(entry: Entry) -> tuple[object, ...]:
    """An entry as a row; one without a time as the three fields rows had before entries carried times."""
    return tuple(entry) if entry.ts is not None else tuple(entry[:3])


class PopError(TurnstreamError, ValueError):
    """The newest message cannot be popped: it is not the one named, or not in the tail any more."""


class SessionCompactor(Window):
    """One session's compacted context, kept up to date turn by turn.

    `append(message, strategy=None) -> list[dict]` validates the message against the session (a tool
    result needs a pending call), drops what no longer fits and returns that span, already folded into
    `digest`; `result()` is the CompactionResult `compact()` would give for everything appended.
    """

    def replace_digest(self, summary: str, facts: tuple[Fact, ...], strategy: Strategy | None = None) -> list[Message]:
        """Put an asynchronously produced summary and facts in place; returns the span a bigger block pushed out."""
        self.digest = replace(self.digest, summary=summary, facts=facts)
        return self._settle(strategy or self.strategy)

    def pop_newest(self, position: int) -> Message:
        """Remove the newest message if it is the tail's last and sits at conversation `position`; return it.

        A removed tool result re-opens its call (its result may come again); a removed tool-call message
        takes its calls, none answered yet, with it. Positions are not given out again.
        """
        newest = self.units[-1].entries[-1] if self.units else None
        if newest is None or newest.seq != position:
            found = "no message in the tail" if newest is None else f"the tail's newest is at position {newest.seq}"
            raise PopError(f"cannot pop position {position}: {found}")
        unit = self.units[-1]
        unit.pop()
        if not unit.entries:
            self.units.pop()
        self.tail_tokens -= newest.tokens
        self.tail_count -= 1
        self.tokens_in -= newest.tokens
        if newest.message["role"] == "tool":
            self.tracker.pending.append(newest.message["tool_call_id"])
        elif call_ids(newest.message):
            self.tracker.pending = []
        return newest.message

    def take_archived(self) -> tuple[ArchivedTurn, ...]:
        """The archived turns collected since the last call, for the owner to ship out."""
        archived, self.archived = tuple(self.archived), []
        return archived

    def snapshot(self) -> dict[str, Any]:
        """The whole state as plain JSON values; token counts travel with it so nothing is counted again."""
        return {
            "v": _FORMAT,
            "budget": [self.budget_tokens, self.budget_messages, self.headroom_tokens],
            "seq": self.seq,
            "dropped": self.dropped,
            "tokens_in": self.tokens_in,
            "pinned": self.pinned,
            "lang": self.tally.counts,
            "calls": [self.tracker.call_index, self.tracker.pending],
            "anchors": [_entry_row(entry) for entry in self.anchors],
            "units": [[_entry_row(entry) for entry in unit.entries] for unit in self.units],
            "summary": self.digest.summary,
            "facts": [[fact.type, fact.text, fact.key, fact.source_seq] for fact in self.digest.facts],
            "archived": [[turn.seq, turn.message, turn.keywords] for turn in self.archived],
        }

    @classmethod
    def restore(cls, state: dict[str, Any], strategy: Strategy | None = None) -> SessionCompactor:
        """Rebuild a session from `snapshot()` output; `strategy` becomes its default strategy."""
        if state.get("v") != _FORMAT:
            raise ValueError(f"unknown SessionCompactor state format {state.get('v')!r}")
        budget_tokens, budget_messages, *headroom = state["budget"]  # rows before the headroom have none
        digest = Digest(
            summary=state["summary"],
            facts=tuple(Fact(type, text, key, source_seq) for type, text, key, source_seq in state["facts"]),
            archived=tuple(ArchivedTurn(seq, message, tuple(keywords)) for seq, message, keywords in state["archived"]),
        )
        session = cls(
            budget_tokens,
            budget_messages=budget_messages,
            digest=digest,
            strategy=strategy,
            headroom_tokens=headroom[0] if headroom else 0,
        )
        session.seq = state["seq"]
        session.dropped = state["dropped"]
        session.tokens_in = state["tokens_in"]
        session.pinned = state["pinned"]
        session.tally = LanguageTally(state["lang"])
        session.tracker = CallTracker(*state["calls"])
        session.anchors = [Entry(*entry) for entry in state["anchors"]]
        session.anchor_tokens = sum(entry.tokens for entry in session.anchors)
        for entries in state["units"]:
            unit = Unit([Entry(*entry) for entry in entries])
            session.units.append(unit)
            session.tail_tokens += unit.tokens
            session.tail_count += len(unit.entries)
        return session

    def to_bytes(self) -> bytes:
        """`snapshot()` as compact JSON."""
        return orjson.dumps(self.snapshot())

    @classmethod
    def from_bytes(cls, data: bytes, strategy: Strategy | None = None) -> SessionCompactor:
        """Rebuild a session from `to_bytes()` output."""
        return cls.restore(orjson.loads(data), strategy)
