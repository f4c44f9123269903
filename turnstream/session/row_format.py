"""A session's row in the sessions Table: its format version, the encoder, and a reader for every version written.

The row is a JSON object with a format version `v` and named fields, the compactor's state nested in it with
a version of its own. A worker reading an older changelog keeps working, and one that meets an unknown version
refuses it with a clear error rather than guessing. Every byte of the row is written and read here; the state's
classes hold behaviour only.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import orjson

from turnstream.compaction.compactor import Entry, Unit
from turnstream.compaction.incremental import SessionCompactor
from turnstream.compaction.messages import CallTracker
from turnstream.compaction.strategies.base import ArchivedTurn, Digest, Fact, Strategy
from turnstream.errors import TurnstreamError
from turnstream.schemas.turn import validate_turn
from turnstream.session.recent import RecentIds
from turnstream.session.reorder import HeldTurn
from turnstream.session.summaries import SummaryRequests
from turnstream.text.language import LanguageTally

if TYPE_CHECKING:
    from turnstream.session.state import SessionState

SNAPSHOT_VERSION = 2
"""1: the first layout (short keys, no `v`, the compactor as a nested object); 2: named fields and `v`. A held
turn, once a JSON string inside the row, is now an object (`held_turn` reads both); the version stays 2
so a worker not yet upgraded, in a rolling deploy, still reads every row that holds no turn."""
COMPACTOR_VERSION = 1
"""The nested compactor state's own version (its `v`)."""


class SnapshotError(TurnstreamError, ValueError):
    """A Table row this version cannot read."""


def encode_row(state: SessionState) -> bytes:
    """The Table row of `state`, in the current format."""
    return orjson.dumps(
        {
            "v": SNAPSHOT_VERSION,
            "session_id": state.session_id,
            "tenant": state.tenant,
            "owner": state.owner,
            "compactor": compactor_row(state.compactor),
            "recent_turn_ids": list(state.recent_turn_ids),
            "dedup_window": state.recent_turn_ids.maxlen,
            "version": state.version,
            "last_turn_id": state.last_turn_id,
            "greetings": state.greetings,
            "summaries": summaries_row(state.summaries),
            "user_facts": [[f.type, f.text, f.key, f.source_seq] for f in state.user_facts],
            "last_seq": state.last_seq,
            "held": [
                {"seq": held.seq, "turn": held.turn.model_dump(exclude_unset=True), "since": held.since}
                for held in state.held
            ],
            "released_through": state.released_through,
        }
    )


def decode_row(data: bytes) -> dict[str, Any]:
    """The state's fields from a Table row of any format written so far; SnapshotError for any other."""
    try:
        raw = orjson.loads(data)
    except orjson.JSONDecodeError as error:
        raise SnapshotError(f"session state is not JSON: {error}") from None
    version = raw.get("v", 1) if isinstance(raw, dict) else None
    if version not in _READERS:
        raise SnapshotError(f"session state format {version!r} is not one this worker reads ({sorted(_READERS)})")
    return _READERS[version](raw)


def row_head(data: bytes) -> tuple[str, int]:
    """(owner, version) of a Table row of any format written so far, without restoring the session's compactor: what
    the re-sync compares with Redis before it rebuilds a context; SnapshotError for any other row."""
    try:
        raw = orjson.loads(data)
        if raw.get("v", 1) in _READERS:
            return str(raw["owner"]), int(raw["version"])
    except (orjson.JSONDecodeError, AttributeError, KeyError, TypeError, ValueError):
        pass
    raise SnapshotError(f"not a session row this worker reads: {data[:80]!r}")


def _fields_v2(raw: dict[str, Any]) -> dict[str, Any]:
    return {
        "session_id": raw["session_id"],
        "tenant": raw["tenant"],
        "owner": raw["owner"],
        "compactor": compactor_from_row(raw["compactor"]),
        "recent_turn_ids": RecentIds(raw["recent_turn_ids"], maxlen=raw["dedup_window"]),
        "version": raw["version"],
        "last_turn_id": raw["last_turn_id"],
        "greetings": raw["greetings"],
        "summaries": summaries_from_row(raw["summaries"]),
        "user_facts": tuple(Fact(*fact) for fact in raw["user_facts"]),
        "last_seq": raw.get("last_seq"),
        "held": [held_turn(entry) for entry in raw.get("held", [])],
        "released_through": raw.get("released_through"),
    }


def _fields_v1(raw: dict[str, Any]) -> dict[str, Any]:
    renamed = {"recent_turn_ids": raw["recent"], "dedup_window": raw["window"], "last_turn_id": raw["last"]}
    return _fields_v2({**raw, **renamed})


_READERS: dict[int, Callable[[dict[str, Any]], dict[str, Any]]] = {1: _fields_v1, 2: _fields_v2}


def held_turn(raw: dict[str, Any] | list[Any]) -> HeldTurn:
    """A held turn of either row layout: `{"seq", "turn", "since"}`, or the first one, `[seq, turn JSON text, since]`."""
    if isinstance(raw, list):
        seq, text, since = raw
        return HeldTurn(seq, validate_turn(orjson.loads(text)), since)
    return HeldTurn(raw["seq"], validate_turn(raw["turn"]), raw["since"])


def summaries_row(summaries: SummaryRequests) -> dict[str, Any]:
    return {
        "next": summaries.next_id,
        "base": summaries.base,
        "inflight": summaries.inflight,
        "since": summaries.inflight_since,
        "inflight_spans": summaries.inflight_spans,
        "pending": summaries.pending,
        "until": summaries.inflight_until,
    }


def summaries_from_row(raw: dict[str, Any]) -> SummaryRequests:
    # a row from before key info has no `until`: 0 lets the answer's facts replace none of the session's
    return SummaryRequests(
        raw["next"],
        raw["base"],
        raw["inflight"],
        raw["since"],
        raw["inflight_spans"],
        raw["pending"],
        raw.get("until", 0),
    )


def _entry_row(entry: Entry) -> tuple[object, ...]:
    """An entry as a row: its fields up to the last one set, so an entry without a time or an original has the three
    fields rows had before entries carried them."""
    if entry.original is not None:
        return tuple(entry)
    return tuple(entry[:4]) if entry.ts is not None else tuple(entry[:3])


def compactor_row(compactor: SessionCompactor) -> dict[str, Any]:
    """The compactor's whole state as plain JSON values; token counts travel with it so nothing is counted again."""
    return {
        "v": COMPACTOR_VERSION,
        "budget": [compactor.budget_tokens, compactor.budget_messages, compactor.headroom_tokens],
        "seq": compactor.seq,
        "dropped": compactor.dropped,
        "tokens_in": compactor.tokens_in,
        "pinned": compactor.pinned,
        "lang": compactor.tally.counts,
        "calls": [compactor.tracker.call_index, compactor.tracker.pending],
        "anchors": [_entry_row(entry) for entry in compactor.anchors],
        "units": [[_entry_row(entry) for entry in unit.entries] for unit in compactor.units],
        "summary": compactor.digest.summary,
        "facts": [[fact.type, fact.text, fact.key, fact.source_seq] for fact in compactor.digest.facts],
        "archived": [[turn.seq, turn.message, turn.keywords] for turn in compactor.archived],
    }


def compactor_from_row(state: dict[str, Any], strategy: Strategy | None = None) -> SessionCompactor:
    """The compactor of `compactor_row()` output; `strategy` becomes its default strategy."""
    if state.get("v") != COMPACTOR_VERSION:
        raise ValueError(f"unknown SessionCompactor state format {state.get('v')!r}")
    budget_tokens, budget_messages, *headroom = state["budget"]  # rows before the headroom have none
    digest = Digest(
        summary=state["summary"],
        facts=tuple(Fact(type, text, key, source_seq) for type, text, key, source_seq in state["facts"]),
        archived=tuple(ArchivedTurn(seq, message, tuple(keywords)) for seq, message, keywords in state["archived"]),
    )
    compactor = SessionCompactor(
        budget_tokens,
        budget_messages=budget_messages,
        digest=digest,
        strategy=strategy,
        headroom_tokens=headroom[0] if headroom else 0,
    )
    compactor.seq = state["seq"]
    compactor.dropped = state["dropped"]
    compactor.tokens_in = state["tokens_in"]
    compactor.pinned = state["pinned"]
    compactor.tally = LanguageTally(state["lang"])
    compactor.tracker = CallTracker(*state["calls"])
    compactor.anchors = [Entry(*entry) for entry in state["anchors"]]
    compactor.anchor_tokens = sum(entry.tokens for entry in compactor.anchors)
    for entries in state["units"]:
        unit = Unit([Entry(*entry) for entry in entries])
        compactor.units.append(unit)
        compactor.tail_tokens += unit.tokens
        compactor.tail_count += len(unit.entries)
    return compactor


def compactor_bytes(compactor: SessionCompactor) -> bytes:
    """`compactor_row()` as compact JSON."""
    return orjson.dumps(compactor_row(compactor))


def compactor_from_bytes(data: bytes, strategy: Strategy | None = None) -> SessionCompactor:
    """The compactor of `compactor_bytes()` output."""
    return compactor_from_row(orjson.loads(data), strategy)
