"""The per-session rules before the core: where a turn goes, what a row stands for, what an erased or unknown
session does with an item, and a batch of sessions (erasure, rebuild after a failure), all without I/O."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from turnstream.schemas.control import ForgetRequest, PopRequest, forget_marker
from turnstream.schemas.ids import Forward
from turnstream.schemas.summaries import SummaryResult
from turnstream.schemas.turn import Turn
from turnstream.session import (
    ERASED,
    CoreConfig,
    Forwarded,
    Loaded,
    SessionBatch,
    SessionCore,
    SessionState,
    Skip,
    classify,
    loaded_from_row,
    opening,
)
from turnstream.session.reorder import HeldTurn
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


@pytest.mark.parametrize(
    ("item", "loaded", "expected"),
    [
        (turn(3), ERASED, Skip("forgotten")),  # erased: a replay or a late turn must not bring it back
        (POP, ERASED, Skip("forgotten", ("pop", "session s1 has no state here (never written, or erased)"))),
        (SummaryResult("s1", 1, "x"), ERASED, Skip("forgotten")),
        (SummaryResult("s1", 1, "x"), None, Skip("no_state")),  # an answer for a session this worker has no state of
        (POP, None, Skip("no_state", ("pop", "session s1 has no state here (never written, or erased)"))),
    ],
)
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


ROW_WITH_A_HELD_TURN_AS_TEXT = (
    b'{"v":2,"session_id":"s1","tenant":null,"owner":":s1","compactor":{"v":1,"budget":[300,null],"seq":1,"dropped":0,'
    b'"tokens_in":6,"pinned":true,"lang":[0,10,0,0],"calls":[-1,[]],"anchors":[[0,6,{"role":"user","content":"hello there"}]],'
    b'"units":[],"summary":"","facts":[],"archived":[]},"recent_turn_ids":["s1-0"],"dedup_window":256,"version":1,'
    b'"last_turn_id":"s1-0","greetings":1,"summaries":{"next":1,"base":"","inflight":null,"since":0.0,"inflight_spans":[],'
    rb'"pending":[]},"user_facts":[],"last_seq":0,"held":[[2,"{\"turn_id\":\"s1-2\",\"session_id\":\"s1\",\"seq\":2,'
    rb'\"message\":{\"role\":\"user\",\"content\":\"hello there\"}}",1700000000.0]],"released_through":null}'
)
"""A Table row as the worker wrote it before held turns were structured: turn s1-0 applied, s1-2 waiting for seq 1."""


def test_a_row_written_before_held_turns_were_structured_restores() -> None:
    restored = SessionState.restore(ROW_WITH_A_HELD_TURN_AS_TEXT)
    assert restored.held == [HeldTurn(2, turn(2), NOW)] and restored.version == 1
    step = CORE.on_turn(restored, turn(1), NOW)
    assert step.outcome == "applied" and step.release == (turn(2),)


def test_a_held_turn_is_an_object_in_the_row_and_comes_back_as_it_went() -> None:
    state = SessionState.restore(ROW_WITH_A_HELD_TURN_AS_TEXT)
    row = orjson.loads(state.snapshot())
    assert row["held"] == [
        {"seq": 2, "turn": orjson.loads(orjson.dumps(turn(2).model_dump(exclude_unset=True))), "since": NOW}
    ]
    assert SessionState.restore(state.snapshot()).held == state.held
