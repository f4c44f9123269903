"""Incremental compaction of one session: the batch rules fed a turn at a time (its row in the sessions Table is
session/row_format.py's)."""

from __future__ import annotations

from dataclasses import replace

from turnstream.compaction.compactor import Window
from turnstream.compaction.strategies.base import ArchivedTurn, Fact, Strategy
from turnstream.errors import TurnstreamError
from turnstream.text.chat import Message, call_ids


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
        return newest.said

    def take_archived(self) -> tuple[ArchivedTurn, ...]:
        """The archived turns collected since the last call, for the owner to ship out."""
        archived, self.archived = tuple(self.archived), []
        return archived
