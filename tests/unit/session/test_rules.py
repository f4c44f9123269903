"""The per-session rules before the core: where a turn goes, what a row stands for, what an erased or unknown
session does with an item, and a batch of sessions (erasure, rebuild after a failure), all without I/O."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from turnstream.schemas import Turn
from turnstream.schemas.control import ForgetRequest, PopRequest, forget_marker
from turnstream.schemas.keys import Forward
from turnstream.session import (ERASED, CoreConfig, Forwarded, Loaded, SessionBatch, SessionCore, SessionState, Skip,
                                SummaryResult, classify, loaded_from_row, opening)
from turnstream.session.state import HeldTurn
from turnstream.settings import Settings

pytestmark = pytest.mark.unit
NOW = 1_700_000_000.0
CORE = SessionCore(CoreConfig.from_settings(Settings(budget_tokens=300)))


def turn(n: int, session: str = "s1", content: str = "hello there") -> Turn:
    return Turn(turn_id=f"{session}-{n}", session_id=session, seq=n, message={"role": "user", "content": content})


def test_a_turn_keyed_by_its_session_applies_here_and_one_keyed_otherwise_is_forwarded() -> None:
    assert classify(turn(0), b"s1", came_forwarded=False) == turn(0)
    assert classify(turn(0), b"s1", came_forwarded=True) == Forwarded(turn(0))
    assert classify(turn(0), b"s2", came_forwarded=True) == Forward(b"s1", "wrong_key")
    assert classify(turn(0), None, came_forwarded=False) == Forward(b"s1", "null_key")


def test_a_row_is_a_state_an_erasure_or_nothing() -> None:
    state = CORE.new_state(turn(0))
    assert loaded_from_row(None) is None and loaded_from_row(forget_marker(NOW)) is ERASED
    restored = loaded_from_row(state.snapshot())
    assert isinstance(restored, SessionState) and restored.key == "s1"


POP = PopRequest("s1", None, "p1", 1, 0)


@pytest.mark.parametrize(("item", "loaded", "expected"), [
    (turn(3), ERASED, Skip("forgotten")),  # erased: a replay or a late turn must not bring it back
    (POP, ERASED, Skip("forgotten", ("pop", "session s1 has no state here (never written, or erased)"))),
    (SummaryResult("s1", 1, "x"), ERASED, Skip("forgotten")),
    (SummaryResult("s1", 1, "x"), None, Skip("no_state")),  # an answer for a session this worker has no state of
    (POP, None, Skip("no_state", ("pop", "session s1 has no state here (never written, or erased)"))),
])
def test_an_erased_or_unknown_session_skips_what_cannot_start_it(item: Any, loaded: Loaded, expected: Skip) -> None:
    assert opening("s1", item, loaded, CORE) == expected


def test_only_a_turn_starts_a_session() -> None:
    opened = opening("s1", Forwarded(turn(0)), None, CORE)
    assert isinstance(opened, SessionState) and opened.version == 0


class Rows:
    def __init__(self, rows: dict[str, bytes]) -> None:
        self.rows, self.loads = rows, 0

    def load(self, key: str) -> Loaded:
        self.loads += 1
        return loaded_from_row(self.rows.get(key))


def test_a_batch_loads_each_session_once_and_a_forget_wipes_what_it_did_for_it() -> None:
    rows = Rows({})
    batch: SessionBatch[str] = SessionBatch(rows, CORE)
    for n in range(3):
        batch.apply("s1", turn(n), f"e{n}", NOW)
    batch.apply("s2", turn(0, "s2"), "f0", NOW)
    batch.erase("s1", ForgetRequest("s1", NOW), "forget")
    late = batch.apply("s1", turn(3), "e3", NOW)
    assert rows.loads == 2 and late == Skip("forgotten")
    assert [source for _, source in batch.steps] == ["f0"]
    assert [(key, source) for key, _, source in batch.rows()] == [("s2", "f0"), ("s1", "forget")]


def test_an_item_that_failed_leaves_no_trace_in_its_session() -> None:
    batch: SessionBatch[str] = SessionBatch(Rows({}), CORE)
    batch.apply("s1", turn(0), "e0", NOW)
    batch.states["s1"].version = 99  # what a half-applied item could leave behind
    batch.rebuild("s1", NOW)
    assert batch.states["s1"].version == 1 and list(batch.states["s1"].recent_turn_ids) == ["s1-0"]


def test_a_row_written_before_held_turns_were_structured_restores() -> None:
    """A Table row of format 2 kept each held turn as a JSON string inside the row."""
    state = CORE.new_state(turn(0))
    CORE.on_turn(state, turn(0), NOW)
    CORE.on_turn(state, Forwarded(turn(2)), NOW)  # waits for seq 1
    row = orjson.loads(state.snapshot())
    assert row["v"] == 3 and row["held"][0]["turn"]["turn_id"] == "s1-2"  # an object, not a string
    old = {**row, "v": 2, "held": [[2, orjson.dumps(row["held"][0]["turn"]).decode(), NOW]]}
    restored = SessionState.restore(orjson.dumps(old))
    assert restored.held == [HeldTurn(2, turn(2), NOW)]
    step = CORE.on_turn(restored, turn(1), NOW)
    assert step.outcome == "applied" and step.release == (turn(2),)
