"""How a context is fitted to a budget: the one set of rules the compactor and the prompt read share.

Where a unit may start (a tool result stays with its call), how long a recent tail fits a room with the
marker a cut needs, how much of a budget the summary/facts block may take, and how that block is cut to a
limit (which facts give up first). The compactor (compactor.py) applies them a message at a time; the prompt
read (turnstream/prompt) applies them to a stored context document, with no LLM and no strategy loaded.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace
from fractions import Fraction
from functools import lru_cache
from typing import Any

import orjson

from turnstream.compaction.marker import block_message, block_text, trim_note
from turnstream.compaction.strategies.base import Digest, Fact
from turnstream.compaction.strategies.tooldata import (
    ITEM_SEPARATOR,
    RESULT_ARROW,
    digest_tool_result,
    parse_result,
    render,
    values_in,
)
from turnstream.text.chat import Message, content_text
from turnstream.text.language import Language
from turnstream.text.terms import cjk_bigrams, spaced_words
from turnstream.text.tokens import count_message, count_text, keep_newest_text, truncate_text

_MIN_BLOCK_TEXT_TOKENS = 16
"""A summary block cut shorter than this says nothing useful; it is left out instead."""
SUMMARY_FLOOR_TOKENS = 64
"""The newest summary text a cut block keeps before it gives up facts."""
SUMMARY_FLOOR_SHARE = Fraction(1, 2)
"""Of a cut block, the share the summary keeps before facts go: the dated story of the dropped periods must not
give all its room to the facts, which repeat single statements."""
BLOCK_BUDGET_SHARE = Fraction(1, 3)
"""The most of the token budget the summary/facts block may take. At small budgets a full block (a 400-token
summary and 40 facts) would otherwise crowd out the recent tail, which is what the model acts on."""
BLOCK_FLOOR_SHARE = Fraction(1, 5)
"""Of the block's cap (or of the room the anchors leave, when smaller), the share a newest structured tool result
leaves to the block once history is cut: a large result (a log dump, a full record) is condensed to its digest,
which keeps its ids and values, rather than take the whole room, since the block holds the ids and choices of the
earlier steps the agent passes next (decision 0050). On bench figure 13's traces a fifth raised the held-out seeds at
4,000 tokens from 94.6 to 95.5 % of old values and lowered no seed; a quarter or a third lost values at 2,500."""
_FACT_LINE_TOKENS = 9
"""At most what a fact's line costs besides its text (bullet, type label, line break), in either language."""
_MIN_CONDENSED_CHARS = 40
"""A tool result condensed to less than this says too little: it is cut as text instead."""
_BLOCK_CACHE_SIZE = 512
"""Rendered blocks remembered by digest and room: a worker rebuilds a session from bytes on every turn."""

DATA_KEY = "data:"
"""How the key of a fact drawn from a tool result begins: `data:<tool>:<arguments>`."""
ENTITY_KEY = DATA_KEY + "#"
"""How the key of a tool result about one entity begins: `data:#<its id>`, whichever tool returned it."""
DATA_VALUE = 4
"""What a tool result's fact is worth: as much as a fact or preference the user stated. The ids an agent passes next
are the data its pending step needs, and events and failures (3) tell the story rather than feed the call."""
_TYPE_VALUE: dict[str, int] = {"constraint": 5, "preference": 4, "fact": 4, "failure": 3, "event": 3}
ASSISTANT_VALUE = 2
"""What a statement of the assistant's is worth, whatever its cue: a recommendation ("推荐浅草松屋…") or a reminder
reads like a constraint, but the user set none, and the data the agent passes next outranks it."""
DECISION_KEY = "decision:"
USER_DECISION_VALUE = 5
"""What the user's decision is worth ("I'll go with 5 gigs at $25 a month", "就住浅草那家"): as much as a constraint,
above the tool data it chose among, since the pending step acts on the choice."""
MODEL_KEY = "model:"
"""How the key of a fact a model extracted under a slot of its own begins (`merge_model_facts`); a fact the model
restates under a known key keeps that key and its worth."""
MODEL_VALUE = 1
"""What a model's fact under a slot of its own is worth: the least. It adds what the offline facts lack where the
block has room, and never pushes out the tool data, decisions and constraints they hold. A model's line about a
tool result rewords what the offline digest holds whole, and the agent traces lost a tenth of their needed values
at a 4,000-token prompt when it ranked above them (bench figure 15)."""
_SAID_BY_ASSISTANT = tuple(f"{kind}:assistant-" for kind in (*_TYPE_VALUE, DECISION_KEY.rstrip(":")))


def fact_value(fact: Fact) -> int:
    """How much a fact is worth keeping: user constraints and decisions first, then facts, preferences and tool data,
    then events and failures, then what the assistant said, then a model's facts under slots of its own; named
    slots get a bonus."""
    if fact.key.startswith(MODEL_KEY):
        return MODEL_VALUE
    if fact.key.startswith(DATA_KEY):
        return DATA_VALUE + (1 if fact.key.startswith(ENTITY_KEY) else 0)
    if fact.key.startswith(_SAID_BY_ASSISTANT):
        return ASSISTANT_VALUE
    if fact.key.startswith(DECISION_KEY):
        return USER_DECISION_VALUE
    value = _TYPE_VALUE.get(fact.type, 1)
    return value + (2 if ":" not in fact.key else 0)


def eviction_order(facts: Sequence[Fact], focus: frozenset[str] = frozenset()) -> list[int]:
    """Indexes of `facts`, the first to give up first: the least valuable, and among equals the oldest. A search
    that a later call of its tool redid (`_redone`) counts one less: an agent that searches again acts on the newest
    search, while a search for something else (the next leg, another city) and a lookup of each other tool (the flight
    chosen, the hotel chosen) are still the ones it has.
    A tool result that shares a term with `focus` (`focus_terms` of the request the next step answers) counts one
    more: it is the data that step refers to. A failed call newer than every tool result counts RETRY_BONUS more, and
    the record of the one the agent serves (`_served_record`) one more."""
    redone = _redone(facts)
    passed = _passed_on(facts)
    focused = [_in_focus(fact, focus) for fact in facts]
    retried = _to_retry(facts)
    served = _served_record(facts)
    return sorted(
        range(len(facts)),
        key=lambda i: (
            fact_value(facts[i]) - redone[i] + passed[i] + focused[i] + RETRY_BONUS * retried[i] + served[i],
            facts[i].source_seq,
            i,
        ),
    )


RETRY_BONUS = 2
"""What a failed call that no tool result has followed yet counts more: the step pending retries it, mostly with the
arguments it failed with ("insufficient balance on the current account" -> the same transfer from savings), so it
ranks with the user's decisions. A failure the agent moved on from keeps a failure's worth: it tells the story."""
FAILED_CALL_KEY = "failure:"
"""How the key of a failed tool call begins: `failure:<tool>:<arguments>` (a failure the user or the assistant told of
is keyed `failure:<slug>`, without a tool)."""


def _is_failed_call(fact: Fact) -> bool:
    """Whether `fact` is a failed tool call's (not a failure someone told of)."""
    tool, colon, _ = fact.key.removeprefix(FAILED_CALL_KEY).partition(":")
    return (
        fact.key.startswith(FAILED_CALL_KEY) and bool(colon) and fact.text.startswith((f"{tool}(", f"{tool} failed:"))
    )


def _to_retry(facts: Sequence[Fact]) -> list[bool]:
    """For each fact, whether it is a failed call newer than every tool result: the call the pending step retries."""
    failed = [_is_failed_call(fact) for fact in facts]
    newest = max(
        (fact.source_seq for fact, call in zip(facts, failed) if call or fact.key.startswith(DATA_KEY)), default=None
    )
    return [call and fact.source_seq == newest for fact, call in zip(facts, failed)]


def _served_record(facts: Sequence[Fact]) -> list[bool]:
    """For each fact, whether it is the record of whom the agent serves: a record about one entity that is the
    conversation's first tool result, not counting lookups that found one value (an email's user id). An agent looks
    up the customer or the user first, as its policy asks, and passes that record's accounts, payment methods and
    reservations on at every step after; a search or a list first (flights, alerts, files) makes none the record."""
    looked_up = [f for f in facts if f.key.startswith(DATA_KEY) and len(_call_and_result_ids(f.text)[1]) > 1]
    first = min(looked_up, key=lambda f: f.source_seq, default=None)
    return [first is not None and fact is first and fact.key.startswith(ENTITY_KEY) for fact in facts]


def focus_of(digest: Digest, request: str | None) -> frozenset[str]:
    """The terms the block's cut favours for `request` (the user's newest message): none unless the digest holds tool
    results, so a chat's block, whose facts rank alike for any question, stays cached across its turns."""
    if not request or not _holds_tool_data(digest):
        return frozenset()
    return focus_terms(request)


@lru_cache(maxsize=_BLOCK_CACHE_SIZE * 8)
def focus_terms(text: str) -> frozenset[str]:
    """The words (function words dropped), CJK bigrams and values of `text`, lower-cased: what a request and a tool
    result can share ("Blue Bottle" and the transaction it names, 首尔 and the hotels searched there)."""
    return frozenset([*spaced_words(text), *cjk_bigrams(text), *(value.lower() for value in values_in(text))])


def _in_focus(fact: Fact, focus: frozenset[str]) -> bool:
    return bool(focus) and fact.key.startswith(DATA_KEY) and not focus.isdisjoint(_data_terms(fact.text))


@lru_cache(maxsize=_BLOCK_CACHE_SIZE * 8)
def _data_terms(text: str) -> frozenset[str]:
    """`focus_terms` of a tool result's fact, its keys and tool names left out: "any flights that day?" names no
    result, though every search's digest reads `flights: …`."""
    return focus_terms(_KEY_NAME.sub(" ", text))


_KEY_NAME = re.compile(r"[\w.]+(?=[=:(])")


PASSED_ON_CALLS = 2
"""Later calls that must pass on a result's ids for it to count as a record the agent keeps coming back to: one call
is a lookup followed through once (a log read for the commit it shows), which the agent has finished with."""


def _passed_on(facts: Sequence[Fact]) -> list[bool]:
    """For each fact, whether it is a tool result whose ids at least PASSED_ON_CALLS later calls passed on: the record
    an agent keeps coming back to (the customer whose line it changes and whose bill it refunds). A model's fact
    quoting the ids passes nothing on: it restates results, and counted, it lifted every record it quoted above the
    failed call the pending step retries (figure 16)."""
    split = [_call_and_result_ids(fact.text) for fact in facts]
    out = []
    for fact, (_, ids) in zip(facts, split):
        later = (
            sum(
                other.source_seq > fact.source_seq
                and not ids.isdisjoint(passed)
                and not other.key.startswith(MODEL_KEY)
                for other, (passed, _) in zip(facts, split)
            )
            if ids and fact.key.startswith(DATA_KEY)
            else 0
        )
        out.append(later >= PASSED_ON_CALLS)
    return out


@lru_cache(maxsize=_BLOCK_CACHE_SIZE * 8)
def _call_and_result_ids(text: str) -> tuple[frozenset[str], frozenset[str]]:
    """The values a fact's call passes, and those of its result that the call does not (none without a result)."""
    call, arrow, result = text.partition(RESULT_ARROW)
    passed = frozenset(values_in(call))
    return passed, (frozenset(values_in(result)) - passed if arrow else frozenset())


REDO_CHANGES = 1
"""Of an earlier call's arguments, how many a later call of the same tool may change and still redo its search."""


def _redone(facts: Sequence[Fact]) -> list[bool]:
    """For each fact, whether it is a search that a later call of the same tool redid: one that keeps all but at most
    REDO_CHANGES of its arguments as they were (another date or keyword for the same route or area, a filter added).
    A later call that changes more asks for something else (the next leg of a trip, another city's hotels): the agent
    still acts on this result too."""
    searches = [_search_call(fact) for fact in facts]
    return [
        call is not None
        and any(
            later is not None and later[0] == call[0] and len(call[1] - later[1]) <= REDO_CHANGES
            for later in searches[index + 1 :]
        )
        for index, call in enumerate(searches)
    ]


def _search_call(fact: Fact) -> tuple[str, frozenset[str]] | None:
    """The tool and the arguments (`k=v` items, as its key renders them) of a fact that holds a result not about one
    entity (a search, a list); else None."""
    if not fact.key.startswith(DATA_KEY) or fact.key.startswith(ENTITY_KEY):
        return None
    tool, _, arguments = fact.key[len(DATA_KEY) :].partition(":")
    return tool, frozenset(item for item in arguments.split(ITEM_SEPARATOR) if item)


def starts_unit(message: Message) -> bool:
    """Whether a message may open a unit of the tail: anything but a tool result, which stays with its call."""
    return message.get("role") != "tool"


def unit_starts(messages: Sequence[Message]) -> list[int]:
    """Where the tail may be cut: at the start of a unit."""
    return [i for i, m in enumerate(messages) if starts_unit(m)]


def tail_start(
    costs: list[int], starts: list[int], room: int, marker_cost: int, start: int | None = None, floor: int = 0
) -> int:
    """Move the tail's start back from `start` (default: the newest unit, always kept) over whole units while
    the tail, with the marker a cut needs, fits in `room`; never before `floor`."""
    if floor == 0 and sum(costs) <= room:
        return 0  # no cut, so no marker either
    start = (starts[-1] if starts else 0) if start is None else start
    suffix = sum(costs[start:])
    for earlier in reversed([s for s in starts if floor <= s < start]):
        suffix += sum(costs[earlier:start])
        if suffix + (marker_cost if earlier else 0) > room:
            break
        start = earlier
    return start


def trim_message(message: Message, limit: int, language: Language, min_kept: int = 0) -> tuple[Message, int] | None:
    """A copy of `message` whose content is cut, with a visible note, to cost at most `limit` tokens.

    None when that is impossible (no content to cut, or fewer than `min_kept` content tokens would remain).
    """
    content = message.get("content")
    if content is None:
        return None
    text = content_text(content)
    counted = _content_tokens(content)
    if message.get("role") == "tool" and (condensed := _condensed_result(message, text, counted, limit, language)):
        return condensed
    overhead = count_message({**message, "content": ""})
    keep = limit - overhead - count_text(trim_note(counted, language))
    while keep >= min_kept:
        # A cut inside a multi-token character decodes to U+FFFD; drop that half character.
        cut = truncate_text(text, keep).rstrip("\ufffd")
        note = trim_note(max(counted - count_text(cut), 0), language)
        trimmed = {**message, "content": f"{cut}\n{note}" if cut else note}
        cost = count_message(trimmed)
        if cost <= limit:
            return trimmed, cost
        keep -= cost - limit
    return None


def condense_result(message: Message, limit: int, language: Language) -> tuple[Message, int] | None:
    """A structured tool result as its digest with the trim note, at most `limit` tokens; None for prose or any
    other message, or when not even a short digest fits."""
    content = message.get("content")
    if message.get("role") != "tool" or content is None:
        return None
    return _condensed_result(message, content_text(content), _content_tokens(content), limit, language)


def _content_tokens(content: Any) -> int:
    """What a message's content costs as sent: a string as it is, parts as their JSON."""
    return count_text(content if isinstance(content, str) else orjson.dumps(content).decode())


def smallest_form(message: Message, language: Language) -> tuple[Message, int] | None:
    """A tool result that no room can hold, as the digest its fact would keep (its ids and values under their paths,
    at most TOOL_DIGEST_CHARS) with the trim note: over the budget still, but by the least that stays faithful. None
    for any other message, or when the digest is not smaller."""
    content = message.get("content")
    if message.get("role") != "tool" or content is None:
        return None
    text = content_text(content)
    counted = _content_tokens(content)
    digest = digest_tool_result(text).text
    condensed = {**message, "content": f"{digest}\n{trim_note(max(counted - count_text(digest), 0), language)}"}
    cost = count_message(condensed)
    return (condensed, cost) if cost < count_message(message) else None


def _condensed_result(
    message: Message, text: str, counted: int, limit: int, language: Language
) -> tuple[Message, int] | None:
    """A structured tool result too big for its room, as its digest (its ids and values under their paths, the most
    detail that fits) with the trim note: a cut through its JSON would keep the first items whole and lose the rest,
    and leave nothing a later fold could read as data. None for prose, or when not even a short digest fits."""
    data = parse_result(text)
    if data is None:
        return None
    best = None
    low, high = _MIN_CONDENSED_CHARS, len(text)
    while low <= high:  # the longest digest whose message fits: a binary search over its length in characters
        chars = (low + high) // 2
        digest = render(data, chars)
        note = trim_note(max(counted - count_text(digest), 0), language)
        condensed = {**message, "content": f"{digest}\n{note}"}
        cost = count_message(condensed)
        if cost <= limit:
            best, low = (condensed, cost), chars + 1
        else:
            high = chars - 1
    return best


@lru_cache(maxsize=_BLOCK_CACHE_SIZE)
def cut_block(
    digest: Digest, language: Language, limit: int, focus: frozenset[str] = frozenset()
) -> tuple[Message, int] | None:
    """The summary/facts message and its cost, at most `limit` tokens; None when nothing useful fits.

    What goes first: the summary's oldest text, token by token, down to its newest `SUMMARY_FLOOR_TOKENS` or half of
    `limit` (the facts are the distilled part, the narrative the fallback; with tool data, all of it); then the least
    valuable facts (`eviction_order`, which favours the tool results `focus` names), tool results first shrunk to their
    values, then to their ids; room no fact that went fits in whole takes the first ids of the most valuable (with a
    count of the rest) when no model wrote the digest; a block still too long is cut at its end, with a note. The
    message is shared by every caller: copy it first.
    """
    block = _render(digest, language)
    if block is None or block[1] <= limit:
        return block
    summary_tokens = count_text(digest.summary)
    # With tool data the story keeps no floor: the ids an agent passes next are in the facts, and the summary gets
    # back whatever room the facts leave (`_with_spare_summary`).
    floor = 0 if _holds_tool_data(digest) else max(SUMMARY_FLOOR_TOKENS, int(limit * SUMMARY_FLOOR_SHARE))
    keep = max(summary_tokens - (block[1] - limit), min(summary_tokens, floor))
    whole_summary = digest.summary
    digest = replace(digest, summary=keep_newest_text(whole_summary, keep) if keep > 0 else "")
    steps = _cut_steps(digest.facts, focus)
    shrunk: dict[int, str] = {}
    # At most what each step frees, so no fact goes that need not.
    frees = []
    for index, text in steps:
        frees.append(_step_frees(digest.facts[index], text, shrunk.get(index)))
        if text is not None:
            shrunk[index] = text
    taken = 0
    while True:
        cut = _cut(digest, steps, taken)
        block = _render(cut, language)
        if block is None or block[1] <= limit:
            cut, block = _with_dropped_facts_that_fit(digest, steps[:taken], cut, block, limit, language)
            return _with_spare_summary(block, cut, whole_summary, keep, limit, language)
        if taken == len(frees):
            return trim_message(block[0], limit, language, min_kept=_MIN_BLOCK_TEXT_TOKENS)
        # Take as many steps as the excess needs at the least, then check the real count again.
        excess = block[1] - limit - frees[taken]
        taken += 1
        while taken < len(frees) and excess > 0:
            excess -= frees[taken]
            taken += 1


def _cut_steps(facts: Sequence[Fact], focus: frozenset[str]) -> list[tuple[int, str | None]]:
    """How a block's facts give up room, in order: each tool result shrinks to its call and the ids and values it
    holds, least valuable first, then to its call and the ids no fact that outlasts it holds, before any fact goes
    (None: the fact goes), least valuable first. A value without its path still lets the agent pass it on; a fact
    gone leaves nothing to pass."""
    order = eviction_order(facts, focus)
    values = [_values_only(fact) for fact in facts]
    shrinks = [(index, text) for index in order if (text := values[index]) is not None]
    bare: list[tuple[int, str]] = []
    said: set[str] = set()
    for index in reversed(order):  # the last to go first: an id it keeps, a fact that goes before it need not repeat
        text = _ids_only(values[index], said)
        if text is not None:
            bare.append((index, text))
        said.update(values_in(text or values[index] or facts[index].text))
    return [*shrinks, *reversed(bare), *((index, None) for index in order)]


def _values_only(fact: Fact) -> str | None:
    """A tool result's fact as its call and the ids and values of its result; None when that is not shorter."""
    if not fact.key.startswith(DATA_KEY):
        return None
    call, arrow, result = fact.text.partition(RESULT_ARROW)
    if not arrow:
        return None
    passed = set(values_in(call))  # a result echoes its call's arguments, which the call already shows
    listed = _phrased_values(result) if fact.key.startswith(ENTITY_KEY) else values_in(result)
    listed += [name for name in dict.fromkeys(_PERSON_NAME.findall(result)) if name not in listed]
    short = f"{call}{RESULT_ARROW}{_VALUES_SEPARATOR.join(v for v in listed if v not in passed)}"
    return short if len(short) < len(fact.text) else None


_PERSON_NAME = re.compile(r"(?<![\w.])(?:(?:first|last)_name|author)=([^;()=,]{1,40})(?=[;)]|$)")
"""A person's name in a rendered result (`first_name=Raj; last_name=Moreau`, a commit's or a deploy's
`author=marcus`): a booking passes it on, as a postmortem names who shipped the bad deploy, and it is words, which
`values_in` does not take."""
_CELL_BREAK = re.compile(r";\s|,\s|:\s|[()=]")
"""Between the cells of a rendered result: its items, list entries, keys and values."""
PHRASE_WORDS = 5
"""The most words a cell may have and still be an id's phrase ("rollback to dep-n3lf3v")."""
_CODE = re.compile(r"[A-Za-z].*\d|\d.*[A-Za-z]")
"""An id of letters and digits (`dep-n3lf3v`, `#W1184`), not a number: an address's house number or a plan's size
makes no phrase worth its words."""


def _phrased_values(result: str) -> list[str]:
    """`values_in(result)`, but an id written in a short phrase that is a cell of its own (a timeline's "rollback to
    dep-n3lf3v", a note's "refund for #W1184") given as that phrase: an agent passes the phrase on verbatim."""
    phrases: dict[str, str] = {}
    for cell in _CELL_BREAK.split(result):
        cell = cell.strip()
        ids = values_in(cell)
        if (
            len(ids) == 1
            and _CODE.search(ids[0]) is not None
            and not cell.startswith(ids[0])
            and len(cell.split()) <= PHRASE_WORDS
        ):
            phrases.setdefault(ids[0], cell)
    return [phrases.get(value, value) for value in values_in(result)]


def _ids_only(shorter: str | None, said: set[str]) -> str | None:
    """A tool result's fact, given as its values (`_values_only`), as its call and the ids of its result that `said`
    lacks, the measures (bare numbers, times of day) left out; None when that is not shorter than its values."""
    if shorter is None:
        return None
    call, _, result = shorter.partition(RESULT_ARROW)
    ids = [value for value in result.split(_VALUES_SEPARATOR) if not _MEASURE.match(value) and value not in said]
    short = f"{call}{RESULT_ARROW}{_VALUES_SEPARATOR.join(ids)}"
    return short if len(short) < len(shorter) else None


_VALUES_SEPARATOR = ", "
"""Between the values of a tool result's shrunk fact."""
_MEASURE = re.compile(r"^[1-9]\d{0,2}(?:\.\d+)?$|^0\.\d+$|^\d{4}-\d{2}-\d{2}[T ]\d|^\d{1,2}:\d{2}")
"""A value that measures rather than names: a number under 1,000 (a count, a rate, a price), a moment with its time of
day (a log line's, a series point's). Longer numbers (a zip code, an account number) and plain dates stay: an agent
passes them on."""


def _step_frees(fact: Fact, text: str | None, shrunk: str | None) -> int:
    """At most what a step frees: a shrink the difference of its text and the fact's text before it, a fact going
    its whole line (its shrunk text's, when an earlier step shrank it)."""
    if text is not None:
        return count_text(shrunk or fact.text) - count_text(text)
    return count_text(shrunk or fact.text) + _FACT_LINE_TOKENS


def _cut(digest: Digest, steps: list[tuple[int, str | None]], taken: int) -> Digest:
    """`digest` after the first `taken` steps."""
    if not taken:
        return digest
    return replace(digest, facts=tuple(fact for fact in _stepped(digest.facts, steps[:taken]) if fact is not None))


def _stepped(facts: Sequence[Fact], steps: list[tuple[int, str | None]]) -> list[Fact | None]:
    """`facts` in their places after `steps`: each shrunk to its step's text, or None where a step let it go."""
    out: list[Fact | None] = list(facts)
    for index, text in steps:
        fact = out[index]
        out[index] = None if text is None or fact is None else replace(fact, text=text)
    return out


def _with_dropped_facts_that_fit(
    digest: Digest,
    taken: list[tuple[int, str | None]],
    cut: Digest,
    block: tuple[Message, int] | None,
    limit: int,
    language: Language,
) -> tuple[Digest, tuple[Message, int] | None]:
    """`cut` with the facts its steps dropped given back, the most valuable first, each in its smallest form, as far as
    the room the last one to go left holds them: a large result that had to go frees room a small one still fits in,
    before the summary takes the rest. A result's smallest form leaves out the ids of facts that were to outlast it
    (`_ids_only`); where those went after all, it comes back with them if the room holds that (`_orphans_restored`)."""
    forms: dict[int, str] = {}
    for index, text in taken:
        if text is not None:
            forms[index] = text
    dropped = [index for index, text in taken if text is None]
    if not dropped or (block is not None and block[1] >= limit):
        return cut, block
    facts = _stepped(digest.facts, taken)
    held = {value for fact in facts if fact is not None for value in values_in(fact.text)}
    for index in reversed(dropped):  # the last to go was the most valuable
        smallest = forms.get(index, digest.facts[index].text)
        forms_to_try = (_orphans_restored(digest.facts[index], smallest, held), smallest)
        cut, block = _given_back(digest.facts[index], forms_to_try, index, facts, cut, block, limit, language, held)
    # Room no whole fact fits in: the first ids of the most valuable that went, where no model wrote the digest. A
    # model's summary carries the newest results' ids verbatim, and at a 4,000-token prompt behind a long policy
    # the ids the prefixes took its room from were the older ones (figure 15: 97.7 -> 96.6 % of old values).
    modelled = any(fact.key.startswith(MODEL_KEY) for fact in digest.facts)
    for index in () if modelled else reversed(dropped):
        if facts[index] is None and (
            first := _first_ids_that_fit(digest.facts[index], forms.get(index, ""), index, facts, cut, limit, language)
        ):
            cut, block, text = first
            facts[index] = replace(digest.facts[index], text=text)
    return cut, block


def _given_back(
    fact: Fact,
    texts: Sequence[str],
    index: int,
    facts: list[Fact | None],
    cut: Digest,
    block: tuple[Message, int] | None,
    limit: int,
    language: Language,
    held: set[str],
) -> tuple[Digest, tuple[Message, int] | None]:
    """`cut` and its `block` with `fact` back in its place `index` among `facts`, as the first of `texts` the room
    holds (`facts` and the ids `held` updated); unchanged when none fits."""
    for text in dict.fromkeys(texts):
        if (fitted := _fitted_with(cut, facts, index, replace(fact, text=text), limit, language)) is not None:
            facts[index] = replace(fact, text=text)
            held.update(values_in(text))
            return fitted
    facts[index] = None
    return cut, block


def _fitted_with(
    cut: Digest, facts: Sequence[Fact | None], index: int, fact: Fact, limit: int, language: Language
) -> tuple[Digest, tuple[Message, int]] | None:
    """`cut` with `facts` (None where one went) and `fact` in place `index`, and its block, if that is at most `limit`
    tokens; else None."""
    placed = [fact if i == index else other for i, other in enumerate(facts)]
    fuller = replace(cut, facts=tuple(other for other in placed if other is not None))
    rendered = _render(fuller, language)
    return (fuller, rendered) if rendered is not None and rendered[1] <= limit else None


def _first_ids_that_fit(
    fact: Fact, smallest: str, index: int, facts: list[Fact | None], cut: Digest, limit: int, language: Language
) -> tuple[Digest, tuple[Message, int], str] | None:
    """Tool result `fact`, too big for the room even at its `smallest` form, as its call and the first of those ids
    that fit in its place `index` among `facts`, with a count of the rest ("+4 more"): the ids in the result's order,
    a few of which are worth more than the story that would take their room. None when not one fits, or for any
    other fact."""
    call, arrow, result = smallest.partition(RESULT_ARROW)
    ids = [value for value in result.split(_VALUES_SEPARATOR) if value] if arrow else []
    best = None
    low, high = 1, len(ids) - 1
    while low <= high:  # the most ids whose block fits: a binary search over their count
        count = (low + high) // 2
        text = f"{call}{RESULT_ARROW}{_VALUES_SEPARATOR.join(ids[:count])} +{len(ids) - count} more"
        if (fitted := _fitted_with(cut, facts, index, replace(fact, text=text), limit, language)) is not None:
            best, low = (*fitted, text), count + 1
        else:
            high = count - 1
    return best


def _orphans_restored(fact: Fact, text: str, held: set[str]) -> str:
    """`text`, a shrunk form of tool result `fact`, with the ids of the fact's values (`_values_only`) that neither it
    nor `held` holds put back in their places; the measures stay out."""
    values = _values_only(fact)
    if values is None or text == fact.text:
        return text
    call, _, result = values.partition(RESULT_ARROW)
    listed = [value for value in result.split(_VALUES_SEPARATOR) if value]
    shown = set(values_in(text))
    orphans = {value for value in listed if value not in held and not _MEASURE.match(value)} - shown
    if not orphans:
        return text
    kept = shown | orphans
    return f"{call}{RESULT_ARROW}{_VALUES_SEPARATOR.join(value for value in listed if value in kept)}"


def _with_spare_summary(
    block: tuple[Message, int] | None, digest: Digest, whole_summary: str, keep: int, limit: int, language: Language
) -> tuple[Message, int] | None:
    """`block`, its summary given back the room that the last fact to go left (a large tool result frees more than
    the excess): the newest `keep` tokens and as many older ones as still fit."""
    if keep >= count_text(whole_summary) or (block is not None and block[1] >= limit):
        return block
    room = keep + limit - (block[1] if block is not None else 0)
    for _ in range(3):  # a text's tokens do not add up exactly once cut: take back the overshoot and try again
        fuller = _render(replace(digest, summary=keep_newest_text(whole_summary, room)), language)
        if fuller is None or fuller[1] <= limit:
            return fuller if fuller is not None else block
        room -= fuller[1] - limit
    return block


def _holds_tool_data(digest: Digest) -> bool:
    """Whether an agent's tool results are among the facts: what its next call passes is there, not in the story."""
    return any(fact.key.startswith(DATA_KEY) for fact in digest.facts)


def _render(digest: Digest, language: Language) -> tuple[Message, int] | None:
    text = block_text(digest, language)
    if not text:
        return None
    message = block_message(text)
    return message, count_message(message)
