"""Agent values: of the values an agent's next tool call passes that appeared earlier, how many its context still holds.

At every assistant tool call made once the history before it is over the budget, that history is compacted the way
`turnstream compact --budget-tokens N` compacts it (the offline strategies; `compact()` is a Window fed a message at
a time, so one Window fed the whole trace gives every prefix's result in one pass). The call's needed values are the
leaf values of its arguments (strings and numbers; booleans and values shorter than MIN_CHARS say nothing) that
occur earlier in the conversation outside its system message; "old" ones occur in none of the RECENT messages
before the call, so only what the compactor kept of older turns can hold them. A value is kept when it occurs in
the text the model gets: every message of the context, marker and summary block included, contents and call
arguments alike.

Two yardsticks read the same histories at the same budget: the bare interceptor (the anchors pinned, the marker,
and the newest whole units that fit: a tool result stays with its call) and LangChain's `trim_messages` (the last
messages that fit, the system message kept, starting on a user message). Besides the shares, each compaction is
checked for the rules a context must keep: anchors first and unchanged, every call with all its results (by
position, so reused call ids cannot pass a wrong pairing), the marker where anything was dropped, within budget.

A tool call whose anchors, marker and newest message cannot fit the budget at all (a policy longer than the budget)
is left out of every share and counted apart, as `pinned_over`: no context can meet that budget, so what any side
keeps there measures nothing.
"""

from __future__ import annotations

import json
import re
import statistics
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from turnstream.compaction.compactor import CompactionResult, Window
from turnstream.compaction.fitting import tail_start, unit_starts
from turnstream.compaction.incremental import SessionCompactor
from turnstream.compaction.marker import marker_message, marker_tokens
from turnstream.compaction.messages import validate_messages
from turnstream.compaction.strategies.base import Strategy
from turnstream.compaction.strategies.grounding import identifiers
from turnstream.compaction.strategies.offline import build_strategy
from turnstream.settings import Settings
from turnstream.text.chat import Message, content_text, tool_calls
from turnstream.text.language import Language, detect_language
from turnstream.text.tokens import REPLY_PRIMING_TOKENS, count_message, count_messages
from turnstream_tools.benchmarks.cost import timed_appends
from turnstream_tools.benchmarks.figures import Figure, Row, Target, interleaved
from turnstream_tools.samples.agent_traces import AgentTrace, agent_traces
from turnstream_tools.samples.conversations import generate_conversations

BUDGETS = (2500, 4000)
RECENT = 4
"""A value in none of the newest RECENT messages before a call is old: only memory can hold it."""
MIN_CHARS = 3
"""Shorter values ("1", "no", "CA") occur everywhere by chance: they are not counted."""
SIDES = ("turnstream", "anchors + tail", "trim_messages")
INVARIANTS = ("anchors", "tool pairs", "marker", "budget")
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")


def leaf_values(arguments: str) -> list[str]:
    """The string and number leaves of a call's JSON arguments, as written, at least MIN_CHARS long, each once."""
    try:
        parsed = json.loads(arguments)
    except ValueError:
        return []
    out: dict[str, None] = {}
    for leaf in _leaves(parsed):
        if isinstance(leaf, bool) or not isinstance(leaf, (str, int, float)):
            continue
        text = leaf.strip() if isinstance(leaf, str) else json.dumps(leaf)
        if len(text) >= MIN_CHARS:
            out[text] = None
    return list(out)


def _leaves(value: Any) -> Iterator[Any]:
    if isinstance(value, dict):
        for child in value.values():
            yield from _leaves(child)
    elif isinstance(value, list):
        for child in value:
            yield from _leaves(child)
    else:
        yield value


@lru_cache(maxsize=65536)
def _pattern(value: str) -> re.Pattern[str]:
    # a Latin value is a whole token ("120" is not in "1200"); a CJK one has no word boundaries to keep
    if _CJK.search(value):
        return re.compile(re.escape(value))
    return re.compile(rf"(?<![A-Za-z0-9_]){re.escape(value)}(?![A-Za-z0-9_])")


def occurs(value: str, text: str) -> bool:
    """Whether `value` is written in `text` as a whole token."""
    return _pattern(value).search(text) is not None


def message_text(message: Message) -> str:
    """What a message shows the model: its content and its calls' names and arguments, JSON escapes undone."""
    parts = [content_text(message.get("content"))]
    for _, name, arguments in tool_calls(message):
        parts.append(name)
        parts.extend(leaf_text(arguments))
    return "\n".join(parts)


def leaf_text(arguments: str) -> list[str]:
    """A call's arguments as the model reads them: each leaf's text (a JSON string would escape a CJK one)."""
    try:
        parsed = json.loads(arguments)
    except ValueError:
        return [arguments]
    return [leaf if isinstance(leaf, str) else json.dumps(leaf) for leaf in _leaves(parsed)]


@dataclass
class Tally:
    """Needed values and how many were kept, all and old."""

    needed: int = 0
    kept: int = 0
    old: int = 0
    old_kept: int = 0

    def add(self, other: Tally) -> None:
        self.needed += other.needed
        self.kept += other.kept
        self.old += other.old
        self.old_kept += other.old_kept

    @property
    def kept_pct(self) -> float:
        return 100.0 * self.kept / self.needed if self.needed else 100.0

    @property
    def old_kept_pct(self) -> float:
        return 100.0 * self.old_kept / self.old if self.old else 100.0

    def to_dict(self) -> dict[str, float]:
        return {
            "needed": self.needed,
            "kept": self.kept,
            "old": self.old,
            "old_kept": self.old_kept,
            "kept_pct": round(self.kept_pct, 1),
            "old_kept_pct": round(self.old_kept_pct, 1),
        }


@dataclass
class RoomTally(Tally):
    """The tallies of the tool calls whose anchors leave one bucket of room, and how many calls they are."""

    calls: int = 0

    def add_call(self, tally: Tally) -> None:
        """One tool call's tally."""
        self.add(tally)
        self.calls += 1

    def merge(self, other: RoomTally) -> None:
        self.add(other)
        self.calls += other.calls

    def to_dict(self) -> dict[str, float]:
        return {"calls": self.calls, **super().to_dict()}


ROOM_EDGES = (250, 500, 1000)
"""Tokens of room left after the anchors where figure 13's tallies are split: a long policy at a small budget leaves the
marker, the block and the tail a few hundred tokens between them."""
ROOM_LABELS = (
    f"under {ROOM_EDGES[0]:,}",
    *(f"{low:,} to {high:,}" for low, high in zip(ROOM_EDGES, ROOM_EDGES[1:])),
    f"{ROOM_EDGES[-1]:,} and more",
)


def room_label(room: int) -> str:
    """The ROOM_LABELS bucket of `room` tokens."""
    return ROOM_LABELS[sum(room >= edge for edge in ROOM_EDGES)]


@dataclass
class Measure:
    """One trace (or many, added up) at one budget: the sides' tallies, the invariants, the values turnstream lost."""

    points: int = 0
    sides: dict[str, Tally] = field(default_factory=lambda: {side: Tally() for side in SIDES})
    clean: int = 0
    """Tool calls whose compacted history kept every invariant."""
    pinned_over: int = 0
    """Tool calls left out: their anchors, marker and newest message alone are over the budget."""
    broken: dict[str, int] = field(default_factory=lambda: dict.fromkeys(INVARIANTS, 0))
    lost_from: dict[str, int] = field(default_factory=lambda: {"tool results only": 0, "user or assistant": 0})
    """turnstream's lost values, by where the conversation had said them."""
    lost: list[str] = field(default_factory=list)
    """A few lost values, as examples."""
    by_room: dict[str, RoomTally] = field(default_factory=lambda: {label: RoomTally() for label in ROOM_LABELS})
    """turnstream's tallies by the room the anchors leave (`room_label`): what a long policy leaves to everything else."""
    invented: int = 0
    """Compacted histories holding a reference a stand-in model invented (`agent_llm.py`; 0 offline)."""

    def add(self, other: Measure) -> None:
        self.points += other.points
        for side in SIDES:
            self.sides[side].add(other.sides[side])
        self.clean += other.clean
        self.pinned_over += other.pinned_over
        for name in INVARIANTS:
            self.broken[name] += other.broken[name]
        for origin in self.lost_from:
            self.lost_from[origin] += other.lost_from[origin]
        self.lost += other.lost[: max(0, _EXAMPLES - len(self.lost))]
        for label in ROOM_LABELS:
            self.by_room[label].merge(other.by_room[label])
        self.invented += other.invented

    def to_dict(self) -> dict[str, Any]:
        return {
            "points": self.points,
            "sides": {side: tally.to_dict() for side, tally in self.sides.items()},
            "invariants_clean": self.clean,
            "invariants_broken": self.broken,
            "pinned_over_budget": self.pinned_over,
            "lost_from": self.lost_from,
            "lost_examples": self.lost,
            "by_room": {label: tally.to_dict() for label, tally in self.by_room.items()},
            "contexts_with_invented_references": self.invented,
        }


_EXAMPLES = 12


@dataclass(frozen=True)
class Needed:
    """A call's needed values: each with whether it is old, and whether only tool results had said it."""

    values: tuple[str, ...]
    old: frozenset[str]
    tool_only: frozenset[str]


def needed_values(messages: Sequence[Message], index: int) -> Needed:
    """The values the tool call at `index` passes that occur earlier, outside system messages."""
    earlier = [(m["role"], message_text(m)) for m in messages[:index] if m.get("role") != "system"]
    recent = "\n".join(message_text(m) for m in messages[max(0, index - RECENT) : index])
    values = [v for _, _, args in tool_calls(messages[index]) for v in leaf_values(args)]
    needed = tuple(dict.fromkeys(v for v in values if any(occurs(v, text) for _, text in earlier)))
    old = frozenset(v for v in needed if not occurs(v, recent))
    said = frozenset(v for v in needed if any(role != "tool" and occurs(v, text) for role, text in earlier))
    return Needed(needed, old, frozenset(needed) - said)


def kept_tally(needed: Needed, context: Sequence[Message]) -> tuple[Tally, list[str]]:
    """How many of `needed` the `context` holds; the values it lacks."""
    text = "\n".join(message_text(m) for m in context)
    missing = [v for v in needed.values if not occurs(v, text)]
    old_missing = [v for v in missing if v in needed.old]
    tally = Tally(len(needed.values), len(needed.values) - len(missing), len(needed.old))
    tally.old_kept = tally.old - len(old_missing)
    return tally, missing


def names_any(context: Sequence[Message], references: frozenset[str]) -> bool:
    """Whether the `context` names one of `references` (identifiers a stand-in model invented) as an identifier."""
    if not references:
        return False
    return not references.isdisjoint(identifiers("\n".join(message_text(m) for m in context)))


def anchor_count(messages: Sequence[Message]) -> int:
    """How many leading messages the anchors are: up to and including the first user message."""
    for index, message in enumerate(messages):
        if message.get("role") == "user":
            return index + 1
    return len(messages)


def anchor_room(messages: Sequence[Message], budget: int) -> int:
    """What `budget` leaves after the reply priming and the anchors: the room of the marker, the block and the tail."""
    return budget - REPLY_PRIMING_TOKENS - sum(count_message(m) for m in messages[: anchor_count(messages)])


def anchors_and_tail(messages: Sequence[Message], budget: int, language: Language) -> list[Message]:
    """The bare interceptor: the anchors, then the marker and the newest whole units that fit `budget`."""
    pinned = anchor_count(messages)
    rest = list(messages[pinned:])
    room = anchor_room(messages, budget)
    start = tail_start([count_message(m) for m in rest], unit_starts(rest), room, marker_tokens(language))
    marker = [marker_message(language)] if start else []
    return [*messages[:pinned], *marker, *rest[start:]]


class LangChainTrim:
    """LangChain's `trim_messages` over a conversation's prefixes, its token counter turnstream's count."""

    def __init__(self, messages: Sequence[Message]) -> None:
        from langchain_core.messages import convert_to_messages, convert_to_openai_messages

        self._to_openai = convert_to_openai_messages
        self.messages = convert_to_messages(list(messages))
        self._costs: dict[int, tuple[Any, int]] = {
            id(m): (m, count_message(original)) for m, original in zip(self.messages, messages)
        }

    def _count(self, messages: list[Any]) -> int:
        total = REPLY_PRIMING_TOKENS
        for message in messages:
            known = self._costs.get(id(message))
            total += known[1] if known is not None else count_message(self._to_openai(message))
        return total

    def trim(self, end: int, budget: int) -> list[Message]:
        from langchain_core.messages import trim_messages

        kept = trim_messages(
            self.messages[:end],
            max_tokens=budget,
            token_counter=self._count,
            strategy="last",
            include_system=True,
            start_on="human",
        )
        converted: list[Message] = self._to_openai(kept)
        return converted


def invariant_breaks(history: Sequence[Message], result: CompactionResult, budget: int) -> list[str]:
    """The rules `result`, a compaction of `history` at `budget`, breaks (INVARIANTS' names)."""
    broken = []
    pinned = anchor_count(history)
    if list(result.positions[:pinned]) != list(range(pinned)) or list(result.messages[:pinned]) != list(
        history[:pinned]
    ):
        broken.append("anchors")
    if not _pairs_whole(history, result):
        broken.append("tool pairs")
    if result.dropped and (result.marker_index is None or result.messages[result.marker_index].get("role") != "system"):
        broken.append("marker")
    if result.tokens.after > budget or count_messages(list(result.messages)) > budget:
        broken.append("budget")
    return broken


NEWEST_FLOOR_TOKENS = 32
"""At most what the newest message costs cut to its trim note: the compactor always keeps it."""


def pinned_over(history: Sequence[Message], budget: int, language: Language) -> bool:
    """Whether the anchors, the marker and the newest message (cut as far as it can be) exceed `budget`: no
    context can then meet it."""
    newest = min(count_message(history[-1]), NEWEST_FLOOR_TOKENS) if len(history) > anchor_count(history) else 0
    return marker_tokens(language) + newest > anchor_room(history, budget)


def _pairs_whole(history: Sequence[Message], result: CompactionResult) -> bool:
    """Every kept call with all its results and every kept result with its own call, by conversation position."""
    try:
        validate_messages(result.messages)
    except ValueError:
        return False
    group: dict[int, int] = {}
    opened = -1
    for position, message in enumerate(history):
        if message.get("role") == "tool":
            group[position] = opened
        elif message.get("tool_calls"):
            opened = position
    members: dict[int, set[int]] = {}
    for position, call in group.items():
        members.setdefault(call, set()).add(position)
    kept = {p for p in result.positions if p is not None}
    return all(group[p] in kept for p in kept if p in group) and all(
        members.get(p, set()) <= kept for p in kept if history[p].get("tool_calls")
    )


def measure_trace(
    messages: Sequence[Message],
    budget: int,
    strategy: Strategy,
    trim: LangChainTrim | None = None,
    invented: Callable[[], frozenset[str]] = frozenset,
) -> Measure:
    """Every tool call made once the history before it is over `budget`: needed values kept by turnstream and
    both yardsticks, and turnstream's invariants. `trim` is the trace's LangChainTrim (made here when None);
    `invented` gives the references a stand-in model behind `strategy` has invented so far."""
    trim = trim or LangChainTrim(messages)
    language = detect_language(list(messages))
    window = Window(budget, strategy=strategy)
    measure = Measure()
    for index, message in enumerate(messages):
        if message.get("tool_calls") and window.tokens_in + REPLY_PRIMING_TOKENS > budget:
            _point(measure, messages, index, window.result(), budget, language, trim, invented)
        window.append(message)
    return measure


def _point(
    measure: Measure,
    messages: Sequence[Message],
    index: int,
    result: CompactionResult,
    budget: int,
    language: Language,
    trim: LangChainTrim,
    invented: Callable[[], frozenset[str]],
) -> None:
    history = messages[:index]
    if pinned_over(history, budget, language):
        measure.pinned_over += 1
        return
    needed = needed_values(messages, index)
    measure.points += 1
    contexts = {
        "turnstream": result.messages,
        "anchors + tail": anchors_and_tail(history, budget, language),
        "trim_messages": trim.trim(index, budget),
    }
    for side, context in contexts.items():
        tally, missing = kept_tally(needed, context)
        measure.sides[side].add(tally)
        if side == "turnstream":
            measure.by_room[room_label(anchor_room(history, budget))].add_call(tally)
            for value in missing:
                measure.lost_from["tool results only" if value in needed.tool_only else "user or assistant"] += 1
            measure.lost += missing[: max(0, _EXAMPLES - len(measure.lost))]
    broken = invariant_breaks(history, result, budget)
    measure.clean += not broken
    measure.invented += names_any(result.messages, invented())
    for name in broken:
        measure.broken[name] += 1


def agent_values(
    traces: Iterable[tuple[str, Sequence[Message]]],
    strategy: Strategy,
    budgets: Sequence[int] = BUDGETS,
    invented: Callable[[], frozenset[str]] = frozenset,
) -> dict[int, dict[str, Measure]]:
    """Per budget, per domain and over all ("all"): the measures of (domain, messages) `traces` (`invented`:
    `measure_trace`'s)."""
    out: dict[int, dict[str, Measure]] = {budget: {"all": Measure()} for budget in budgets}
    for domain, messages in traces:
        trim = LangChainTrim(messages)
        for budget in budgets:
            measured = measure_trace(messages, budget, strategy, trim, invented)
            out[budget].setdefault(domain, Measure()).add(measured)
            out[budget]["all"].add(measured)
    return out


TARGET_OLD, TARGET_ALL = 95.0, 97.0
"""Percent of old and of all needed values turnstream keeps at every budget (issue 47's targets)."""
COST_BUDGET = 4000
"""The budget the cost a turn is measured at: the default's."""


def domain_of(trace: AgentTrace) -> str:
    return trace.domain if trace.language == "en" else f"{trace.domain} ({trace.language})"


HOLDOUT_SEEDS = (11, 23)
"""Seeds of traces no rule was tuned on: the figure reports them apart, and its target holds only if they meet it too.
The development traces start at seed 0 (`agent_figure`'s `seed`), `per_domain` seeds each, so these stay apart."""


def agent_figure(
    per_domain: int, seed: int = 0, settings: Settings | None = None, holdout_seeds: Sequence[int] = ()
) -> Figure:
    """Figure 13: agent values kept at tool calls through `compact`, beside both yardsticks, with the invariants;
    the same on `holdout_seeds`' traces, beside anchors + tail; and what a tool-heavy trace costs the core a turn,
    beside a chat."""
    settings = settings or Settings()
    traces = agent_traces(per_domain, seed)
    strategy = build_strategy(settings)
    measured = agent_values([(domain_of(t), t.messages) for t in traces], strategy)
    held_out = {
        other: agent_values([(domain_of(t), t.messages) for t in agent_traces(per_domain, other)], strategy)
        for other in holdout_seeds
    }
    rows: list[Row] = []
    met = True
    for budget, by_domain in measured.items():
        total = by_domain["all"]
        ours = total.sides["turnstream"]
        label = f"at {budget:,}"
        for side in SIDES[1:]:
            theirs = total.sides[side]
            rows.append(Row.of(f"old values {label} vs {side}", "% kept", ours.old_kept_pct, theirs.old_kept_pct))
            rows.append(Row.of(f"all values {label} vs {side}", "% kept", ours.kept_pct, theirs.kept_pct))
        rows.append(Row.of(f"invariants {label}", "calls clean / calls", total.clean, total.points))
        met = met and ours.old_kept_pct >= TARGET_OLD and ours.kept_pct >= TARGET_ALL and total.clean == total.points
        if held_out:
            pooled = Measure()
            for by_seed in held_out.values():
                pooled.add(by_seed[budget]["all"])
            mine, tail = pooled.sides["turnstream"], pooled.sides[SIDES[1]]
            seeds = ", ".join(map(str, held_out))
            rows.append(
                Row.of(f"old values {label}, held-out seeds {seeds}", "% kept", mine.old_kept_pct, tail.old_kept_pct)
            )
            rows.append(Row.of(f"all values {label}, held-out seeds {seeds}", "% kept", mine.kept_pct, tail.kept_pct))
            rows.append(
                Row.of(
                    f"invariants {label}, held-out seeds {seeds}", "calls clean / calls", pooled.clean, pooled.points
                )
            )
            met = (
                met
                and mine.old_kept_pct >= TARGET_OLD
                and mine.kept_pct >= TARGET_ALL
                and pooled.clean == pooled.points
            )
    agent_us, chat_us = turn_cost(traces, settings)
    rows.append(
        Row.of(
            "core a turn, tool-heavy vs chat (median)", "µs", statistics.median(agent_us), statistics.median(chat_us)
        )
    )
    rows.append(
        Row.of("core a turn, tool-heavy vs chat (mean)", "µs", statistics.fmean(agent_us), statistics.fmean(chat_us))
    )
    data = {
        "traces": len(traces),
        "per_domain": per_domain,
        "seed": seed,
        "budgets": {str(b): {d: m.to_dict() for d, m in by_domain.items()} for b, by_domain in measured.items()},
        "held_out": {
            str(other): {str(b): {d: m.to_dict() for d, m in by.items()} for b, by in by_seed.items()}
            for other, by_seed in held_out.items()
        },
        "cost_budget_tokens": COST_BUDGET,
    }
    return Figure(
        "agent_values",
        "13 Agent values at tool calls",
        "turnstream compact",
        "yardstick",
        rows,
        Target(
            f"≥ {TARGET_OLD:.0f} % of old and ≥ {TARGET_ALL:.0f} % of all needed values at each budget, held-out "
            "seeds included; invariants 100 %",
            met,
        ),
        data,
    )


def turn_cost(traces: Sequence[AgentTrace], settings: Settings, seed: int = 0) -> tuple[list[float], list[float]]:
    """Microseconds of one append() + result() at COST_BUDGET (figure 6's measure), each trace's turns against as
    many turns of a generated chat, interleaved ABBA."""
    chats = generate_conversations(len(traces), max(len(t.messages) for t in traces), seed)
    agent_us: list[float] = []
    chat_us: list[float] = []
    for trace, chat in zip(traces, chats):
        turns = min(len(trace.messages), len(chat.messages))
        agent, talk = (SessionCompactor(COST_BUDGET, strategy=build_strategy(settings, archive=False)) for _ in "ab")
        ours, theirs = interleaved(
            timed_appends(agent, trace.messages[:turns]), timed_appends(talk, chat.messages[:turns]), turns
        )
        agent_us += ours
        chat_us += theirs
    return agent_us, chat_us
