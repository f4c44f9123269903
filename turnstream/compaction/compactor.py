"""The compaction rules (docs/architecture.md) as one state machine fed a message at a time, and the batch form over it."""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any, NamedTuple

from turnstream.compaction.fitting import (
    BLOCK_BUDGET_SHARE,
    BLOCK_FLOOR_SHARE,
    condense_result,
    cut_block,
    focus_of,
    smallest_form,
    starts_unit,
    trim_message,
)
from turnstream.compaction.marker import marker_message, marker_tokens
from turnstream.compaction.messages import CallTracker, validate_messages
from turnstream.compaction.strategies.base import ArchivedTurn, Digest, Fact, Strategy
from turnstream.schemas.token_counts import TokenCounts
from turnstream.text.chat import Message, call_ids, content_text
from turnstream.text.language import Language, LanguageTally
from turnstream.text.tokens import REPLY_PRIMING_TOKENS, count_message


class _KeepDigest:
    """The strategy used when none is given: the digest stays as it is."""

    name = "none"

    def apply(self, digest: Digest, dropped: Sequence[Message], first_seq: int) -> Digest:
        return digest


KEEP_DIGEST: Strategy = _KeepDigest()


@dataclass(frozen=True, slots=True)
class CompactionResult:
    """The compacted context, ready to send to a chat model."""

    messages: tuple[Message, ...]
    positions: tuple[int | None, ...]
    """Each message's position in the conversation (0-based); None for the marker and the summary block."""
    message_tokens: tuple[int, ...]
    """Each message's token cost, as counted into `tokens.after` (the reply priming aside)."""
    language: Language
    """The conversation's language, as the marker and block speak it."""
    marker_index: int | None
    """Index of the marker in `messages`; None when nothing was dropped."""
    dropped: int
    """Input messages dropped (trimmed ones are kept, so they do not count)."""
    digest: Digest
    """The strategies' digest; `archived` holds the archived turns not yet taken by the owner."""
    tokens: TokenCounts

    @property
    def summary(self) -> str:
        return self.digest.summary

    @property
    def facts(self) -> tuple[Fact, ...]:
        return self.digest.facts

    def to_dict(self) -> dict[str, Any]:
        """The contract form (docs/architecture.md, "Compaction result")."""
        return {
            "messages": list(self.messages),
            "positions": list(self.positions),
            "message_tokens": list(self.message_tokens),
            "language": self.language,
            "marker_index": self.marker_index,
            "dropped": self.dropped,
            "summary": self.digest.summary,
            "facts": [
                {"type": fact.type, "text": fact.text, "key": fact.key, "source_seq": fact.source_seq}
                for fact in self.digest.facts
            ],
            "tokens": {"before": self.tokens.before, "after": self.tokens.after, "budget": self.tokens.budget},
        }


class Entry(NamedTuple):
    """One kept message with its conversation position and its token cost, counted once."""

    seq: int
    tokens: int
    message: Message
    ts: float | None = None
    """When it was said (epoch seconds), when the caller knows: what dates the summary's lines."""
    original: Message | None = None
    """The message as it was said, when `message` is a copy cut to fit the window: what a fold (the facts, the
    archive, a summarizer) and a pop get, so a result cut to its room in the tail loses nothing once it drops."""

    @property
    def said(self) -> Message:
        """The message as it was said."""
        return self.original if self.original is not None else self.message


class Unit:
    """What can only be dropped whole: one message, or an assistant tool call with all its results."""

    __slots__ = ("entries", "tokens")

    def __init__(self, entries: list[Entry]) -> None:
        self.entries = entries
        self.tokens = sum(entry.tokens for entry in entries)

    def add(self, entry: Entry) -> None:
        self.entries.append(entry)
        self.tokens += entry.tokens

    def pop(self) -> Entry:
        """Take back the newest entry (`add` undone)."""
        entry = self.entries.pop()
        self.tokens -= entry.tokens
        return entry


class Window:
    """The compaction rules as a state machine: anchors, a tail of whole units, a running digest.

    Every append costs what the budget allows to be kept, never what the conversation has seen:
    each message is counted once, only the tail's front is ever dropped, and the totals are running.
    """

    def __init__(
        self,
        budget_tokens: int,
        *,
        budget_messages: int | None = None,
        digest: Digest | None = None,
        strategy: Strategy | None = None,
        headroom_tokens: int = 0,
    ) -> None:
        if budget_tokens < 1:
            raise ValueError(f"budget_tokens must be positive, got {budget_tokens}")
        if budget_messages is not None and budget_messages < 1:
            raise ValueError(f"budget_messages must be positive, got {budget_messages}")
        if not 0 <= headroom_tokens < budget_tokens:
            raise ValueError(f"headroom_tokens must be at least 0 and below the budget, got {headroom_tokens}")
        digest = digest or Digest()
        self.budget_tokens = budget_tokens
        self.budget_messages = budget_messages
        self.headroom_tokens = headroom_tokens
        """Once the context outgrows its budget, units go until it fits this much under it: a span folds every few
        turns, not every turn, and the head of the prompt stays the same between cuts."""
        self.strategy: Strategy = strategy or KEEP_DIGEST
        self.digest = replace(digest, archived=())
        self.archived: list[ArchivedTurn] = list(digest.archived)
        self.tracker = CallTracker()
        self.tally = LanguageTally()
        self.anchors: list[Entry] = []
        self.anchor_tokens = 0
        self.pinned = False
        """Whether the first user message has arrived (the anchors are complete)."""
        self.units: deque[Unit] = deque()
        self.tail_tokens = 0
        self.tail_count = 0
        self.dropped = 0
        self.seq = 0
        self.tokens_in = 0
        self.block_cap = int(budget_tokens * BLOCK_BUDGET_SHARE)
        self._capped_block: tuple[Digest, Language, frozenset[str], tuple[Message, int] | None] | None = None
        """The latest `cut_block` at the cap, with the digest object, language and focus it was cut for."""

    def append(self, message: Message, strategy: Strategy | None = None, ts: float | None = None) -> list[Message]:
        """Add the next message (said at `ts`, epoch seconds, when known); return the span this dropped (already
        folded into the digest)."""
        self.tracker.accept(message, self.seq)
        seq, tokens = self.seq, count_message(message)
        self.seq += 1
        self.tokens_in += tokens
        self.tally.add(message)
        role = message["role"]
        leading_system = role == "system" and not self.units and not self.dropped
        if not self.pinned and (role == "user" or leading_system):
            if role == "user":
                # Whatever came before the first user message (a greeting) is pinned with it,
                # so the pinned prefix keeps its order.
                self.pinned = True
                while self.units:
                    self._pin_all(self._pop_unit().entries)
            self._pin_all([Entry(seq, tokens, message, ts)])
        else:
            joins_call = not starts_unit(message)
            fitted, tokens = self._fit_newest(message, tokens, joins_call)
            entry = Entry(seq, tokens, fitted, ts, None if fitted is message else message)
            if joins_call:
                self.units[-1].add(entry)
            else:
                self.units.append(Unit([entry]))
            self.tail_tokens += tokens
            self.tail_count += 1
        return self._settle(strategy or self.strategy)

    def result(self) -> CompactionResult:
        language = self.tally.language()
        messages = [entry.message for entry in self.anchors]
        positions: list[int | None] = [entry.seq for entry in self.anchors]
        costs = [entry.tokens for entry in self.anchors]
        marker_index = None
        if self.dropped:
            marker_index = len(messages)
            messages.append(marker_message(language))
            costs.append(marker_tokens(language))
            room = self.budget_tokens - REPLY_PRIMING_TOKENS - sum(costs) - self.tail_tokens
            block = self._block_within(room, len(messages), language)
            if block is not None:
                messages.append({**block[0]})  # a copy: the rendered block is shared through the cache
                costs.append(block[1])
            positions += [None] * (len(messages) - len(positions))
        tail = [entry for unit in self.units for entry in unit.entries]
        messages.extend(entry.message for entry in tail)
        positions.extend(entry.seq for entry in tail)
        costs.extend(entry.tokens for entry in tail)
        tokens = REPLY_PRIMING_TOKENS + sum(costs)
        digest = replace(self.digest, archived=tuple(self.archived))
        counts = TokenCounts(REPLY_PRIMING_TOKENS + self.tokens_in, tokens, self.budget_tokens)
        return CompactionResult(
            tuple(messages), tuple(positions), tuple(costs), language, marker_index, self.dropped, digest, counts
        )

    def step_call(self) -> Message | None:
        """The assistant message that opened the newest step when it calls tools: what a tool result answers."""
        if not self.units:
            return None
        first = self.units[-1].entries[0].message
        return first if first.get("tool_calls") else None

    def _pin_all(self, entries: list[Entry]) -> None:
        self.anchors.extend(entries)
        self.anchor_tokens += sum(entry.tokens for entry in entries)

    def _pop_unit(self) -> Unit:
        unit = self.units.popleft()
        self.tail_tokens -= unit.tokens
        self.tail_count -= len(unit.entries)
        return unit

    def _fit_newest(self, message: Message, tokens: int, joins_call: bool) -> tuple[Message, int]:
        """Trim a message that, as part of the newest step, cannot fit however much older history goes; a structured
        tool result that would crowd out the summary/facts block is condensed to leave the block its floor."""
        step = self.units[-1].tokens if joins_call else 0
        older_units = len(self.units) - (1 if joins_call else 0)
        fixed = REPLY_PRIMING_TOKENS + self.anchor_tokens
        language = self.tally.language()
        rooms = []
        if not self.dropped:
            rooms.append(self.budget_tokens - fixed - (self.tail_tokens - step))
            if tokens <= rooms[0] - step:
                return message, tokens  # fits with nothing cut
        cut = bool(self.dropped or older_units)
        if cut:
            rooms.append(self.budget_tokens - fixed - marker_tokens(language))
        room = max(rooms)
        if joins_call and cut and (condensed := self._leave_block_floor(message, tokens, room, language)):
            return condensed
        if tokens <= room - step:
            return message, tokens
        if joins_call:
            # An oversized result takes no more than an equal share of the step, so later parallel
            # results still find room; trimming happens only when the step cannot fit anyway.
            fair = self._fair_share(room)
            if fair < room - step and (trimmed := trim_message(message, fair, language)):
                return trimmed
        # When not even a cut message fits (the anchors fill the budget), a tool result falls to its digest, the
        # smallest form that keeps its values; any other message stays as it is: the documented over-budget case.
        return trim_message(message, room - step, language) or smallest_form(message, language) or (message, tokens)

    def _leave_block_floor(
        self, result: Message, tokens: int, room: int, language: Language
    ) -> tuple[Message, int] | None:
        """`result` (costing `tokens`), a tool result of the newest step, condensed to leave the block its floor (an
        equal share of what is left each); None when it fits beside the floor, or is prose: a cut through prose loses
        values, where a structured result's digest keeps them."""
        room -= int(min(self.block_cap, room) * BLOCK_FLOOR_SHARE)
        left = room - self.units[-1].tokens
        if tokens <= left:
            return None
        return condense_result(result, min(self._fair_share(room), left), language)

    def _fair_share(self, room: int) -> int:
        """What each result of the newest step may take of `room`, its call's cost set aside: an equal share."""
        call = self.units[-1].entries[0]
        return (room - call.tokens) // len(call_ids(call.message))

    def _settle(self, strategy: Strategy) -> list[Message]:
        """When the context outgrows its budget, drop whole units from the tail's front until it fits
        `headroom_tokens` under it; fold each span into the digest."""
        dropped: list[Entry] = []
        folded = 0
        cutting = False
        while True:
            # once cutting, down to the headroom, a fold's bigger block included
            cutting = cutting or not self._fits()
            if cutting:
                while len(self.units) > 1 and not self._fits(self.headroom_tokens):
                    unit = self._pop_unit()
                    dropped.extend(unit.entries)
                    self.dropped += len(unit.entries)
            if folded == len(dropped):
                return [entry.said for entry in dropped]
            # The folded digest may render a bigger block, so fit again after each fold.
            self._fold(dropped[folded:], strategy)
            folded = len(dropped)

    def _fold(self, span: list[Entry], strategy: Strategy) -> None:
        # The strategies write in the conversation's language, the one the marker speaks.
        times = tuple(entry.ts for entry in span) if any(entry.ts is not None for entry in span) else ()
        folding = replace(self.digest, language=self.tally.language(), times=times)
        digest = strategy.apply(folding, [entry.said for entry in span], span[0].seq)
        # `archived` holds only the latest application's turns: collect them before the next fold.
        self.archived.extend(digest.archived)
        self.digest = replace(digest, archived=(), language=None, times=())

    def _fits(self, headroom: int = 0) -> bool:
        """Whether the context, marker and block included, is within the budget less `headroom` tokens."""
        tokens = REPLY_PRIMING_TOKENS + self.anchor_tokens + self.tail_tokens
        count = len(self.anchors) + self.tail_count
        if self.dropped:
            language = self.tally.language()
            block = self._block_at_cap(language)
            tokens += marker_tokens(language) + (block[1] if block else 0)
            count += 2 if block else 1
        return tokens <= self.budget_tokens - headroom and (
            self.budget_messages is None or count <= self.budget_messages
        )

    def _block_at_cap(self, language: Language) -> tuple[Message, int] | None:
        """`cut_block` of the digest at the cap. Asked after every drop and again for the result while the
        digest object stays the same: kept here, which spares hashing the whole digest for the shared cache."""
        focus = self._focus()
        kept = self._capped_block
        if kept is None or kept[0] is not self.digest or kept[1] != language or kept[2] != focus:
            block = cut_block(self.digest, language, self.block_cap, focus)
            kept = self._capped_block = (self.digest, language, focus, block)
        return kept[3]

    def _block_within(self, room: int, count_before: int, language: Language) -> tuple[Message, int] | None:
        """The block, cut further to `room` tokens when only the newest step is left; None when it cannot fit."""
        if self.budget_messages is not None and count_before + 1 + self.tail_count > self.budget_messages:
            return None
        block = self._block_at_cap(language)  # the one _fits sized the tail with
        if block is None or block[1] <= room:
            return block
        return cut_block(self.digest, language, room, self._focus())

    def _focus(self) -> frozenset[str]:
        """What the block's cut favours: the terms of the newest user message in the tail, the request the pending
        step answers (read from the tail, so a window rebuilt from its state cuts the same block)."""
        request = next(
            (u.entries[0].message for u in reversed(self.units) if u.entries[0].message.get("role") == "user"), None
        )
        return focus_of(self.digest, content_text(request.get("content")) if request else None)


def compact(
    messages: Sequence[Message],
    budget_tokens: int,
    *,
    strategy: Strategy | None = None,
    budget_messages: int | None = None,
    digest: Digest | None = None,
    times: Sequence[float | None] | None = None,
    headroom_tokens: int = 0,
) -> CompactionResult:
    """Compact a whole conversation: the same result as feeding it to a SessionCompactor one message at a time.

    `times`, one per message (epoch seconds, None where unknown), date the summary's periods as a worker
    dates them from its turns' `ts`; without them the summary is one undated period. `headroom_tokens`: how far
    under the budget a cut goes (a worker's is `TURNSTREAM_DROP_HEADROOM` of it; one-shot, 0 fills the budget)."""
    if times is not None and len(times) != len(messages):
        raise ValueError(f"{len(times)} times for {len(messages)} messages")
    # Validate everything first, so a bad message fails before any strategy (maybe an LLM) runs.
    validate_messages(messages)
    window = Window(
        budget_tokens,
        budget_messages=budget_messages,
        digest=digest,
        strategy=strategy,
        headroom_tokens=headroom_tokens,
    )
    for message, ts in zip(messages, times or [None] * len(messages)):
        window.append(message, ts=ts)
    return window.result()
