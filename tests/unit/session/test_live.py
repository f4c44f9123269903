"""Live session states: the bounded map (count, idle time, partitions) and the loader that lends a batch its states
and takes them back only once the batch is stored; a live state steps exactly as its restored row would."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from turnstream.schemas.control import ForgetRequest
from turnstream.schemas.turn import Turn
from turnstream.session import CoreConfig, LiveMap, LiveStates, Loaded, SessionBatch, SessionCore, SessionState
from turnstream.settings import Settings
from turnstream_tools.samples.planted import generate

pytestmark = pytest.mark.unit
NOW = 1_700_000_000.0
CORE = SessionCore(CoreConfig.from_settings(Settings(budget_tokens=300)))


def turn(session: str, n: int, content: str = "Lisbon in May, budget 3500 EUR.") -> Turn:
    return Turn(
        turn_id=f"{session}-{n}",
        session_id=session,
        user_id="maya",
        seq=n,
        ts=NOW + n,
        message={"role": "user" if n % 2 == 0 else "assistant", "content": content},
    )


def state(session: str = "s") -> SessionState:
    return CORE.new_state(turn(session, 0))


Op = tuple[str, Any]
ops = st.lists(
    st.one_of(
        st.tuples(st.just("put"), st.tuples(st.integers(0, 30), st.integers(0, 3), st.floats(0, 40))),
        st.tuples(st.just("take"), st.integers(0, 30)),
        st.tuples(st.just("drop"), st.frozensets(st.integers(0, 3), max_size=2)),
        st.tuples(st.just("keep"), st.frozensets(st.integers(0, 3), max_size=3)),
    ),
    max_size=80,
)


@hypothesis_settings(max_examples=300, deadline=None)
@given(ops, st.integers(0, 8), st.sampled_from([0.0, 5.0, 30.0]))
def test_the_map_is_never_over_its_bound_and_keeps_the_recently_used_of_the_held_partitions(
    script: list[Op], bound: int, idle: float
) -> None:
    live, model = LiveMap(bound, idle), {}  # model: key -> (partition, used), in order of use
    clock, values = 0.0, {}
    for op, arg in script:
        if op == "put":
            key, partition, step = arg
            clock += step
            values[key] = state(f"s{key}")
            live.put(f"s{key}", values[key], partition, clock)
            if bound:
                model.pop(key, None)
                model[key] = (partition, clock)
                while len(model) > bound:
                    del model[next(iter(model))]
                model = {k: v for k, v in model.items() if not idle or clock - v[1] <= idle}
        elif op == "take":
            taken = live.take(f"s{arg}")
            assert (taken is values.get(arg)) if arg in model else taken is None
            model.pop(arg, None)
        elif op == "drop":
            live.drop_partitions(arg)
            model = {k: v for k, v in model.items() if v[0] not in arg}
        else:
            live.keep_partitions(arg)
            model = {k: v for k, v in model.items() if v[0] in arg}
        assert len(live) <= bound
        assert list(live.kept) == [f"s{key}" for key in model]


def test_an_idle_state_leaves_when_the_next_one_comes_in() -> None:
    live = LiveMap(10, idle_seconds=60)
    live.put("old", state("old"), 0, 0.0)
    live.put("mid", state("mid"), 0, 30.0)
    live.put("new", state("new"), 0, 61.0)
    assert list(live.kept) == ["mid", "new"]


class Rows:
    """The Table loader's stand-in: a state restored from its row, every time, and counted."""

    def __init__(self) -> None:
        self.rows: dict[str, bytes] = {}
        self.loads = 0

    def load(self, key: str) -> Loaded:
        self.loads += 1
        row = self.rows.get(key)
        return SessionState.restore(row) if row is not None else None


def stored_batch(live: LiveStates, rows: Rows, items: list[tuple[str, Turn]], clock: float = 0.0) -> SessionBatch[None]:
    """A batch stepped, its rows written (what the Table sink does), and taken back as stored."""
    batch = stepped(live, items)
    for key, row, _ in batch.rows():
        assert isinstance(row, SessionState)
        rows.rows[key] = row.snapshot()
    live.stored(batch, clock)
    return batch


def stepped(live: LiveStates, items: list[tuple[str, Turn]]) -> SessionBatch[None]:
    batch: SessionBatch[None] = SessionBatch(live, CORE)
    for key, item in items:
        batch.apply(key, item, None, NOW)
    return batch


def loader(rows: Rows, bound: int = 100) -> LiveStates:
    return LiveStates(rows, lambda key: int(key[-1]), bound, 0)


def test_a_stored_batch_s_states_are_lent_to_the_next_batch_without_their_rows() -> None:
    rows = Rows()
    live = loader(rows)
    first = stored_batch(live, rows, [("s1", turn("s1", 0)), ("s2", turn("s2", 0))])
    assert rows.loads == 2 and len(live.live) == 2
    second = stepped(live, [("s1", turn("s1", 1))])
    assert second.states["s1"] is first.states["s1"] and rows.loads == 2
    assert "s1" not in live.live  # lent: the batch may change it


def test_a_failed_batch_leaves_none_of_its_states_live_and_the_next_restores_the_rows() -> None:
    rows = Rows()
    live = loader(rows)
    stored_batch(live, rows, [("s1", turn("s1", 0)), ("s2", turn("s2", 0))])
    failed = stepped(live, [("s1", turn("s1", 1))])
    failed.erase("s2", ForgetRequest("s2", NOW), None)
    live.failed(failed)
    assert len(live.live) == 0
    replay = stored_batch(live, rows, [("s1", turn("s1", 1))])
    assert [step.outcome for step, _ in replay.steps] == [
        "applied"
    ]  # on the row, not on the unstored state that has it
    assert rows.loads == 3


def test_a_batch_that_erases_a_session_drops_its_live_state() -> None:
    rows = Rows()
    live = loader(rows)
    stored_batch(live, rows, [("s1", turn("s1", 0))])
    batch = stepped(live, [])
    batch.erase("s1", ForgetRequest("s1", NOW), None)
    live.stored(batch, 1.0)
    assert "s1" not in live.live


def test_a_state_lent_before_a_rebalance_is_not_taken_back() -> None:
    rows = Rows()
    live = loader(rows)
    batch = stepped(live, [("s1", turn("s1", 0)), ("s2", turn("s2", 0))])
    live.revoked({3})  # neither session's partition, yet the batch straddled a rebalance
    live.stored(batch, 0.0)
    assert len(live.live) == 0


def test_revocation_and_assignment_keep_only_the_held_partitions() -> None:
    rows = Rows()
    live = loader(rows)
    stored_batch(live, rows, [(f"s{n}", turn(f"s{n}", 0)) for n in range(1, 5)])
    live.revoked({1})
    assert list(live.live.kept) == ["s2", "s3", "s4"]
    live.assigned({2, 4})
    assert list(live.live.kept) == ["s2", "s4"]
    live.forget("s4")
    assert list(live.live.kept) == ["s2"]


def test_no_bound_keeps_nothing_live() -> None:
    rows = Rows()
    live = loader(rows, bound=0)
    stored_batch(live, rows, [("s1", turn("s1", 0))])
    stepped(live, [("s1", turn("s1", 1))])
    assert rows.loads == 2


def test_a_rebuilt_state_is_the_one_taken_back() -> None:
    rows = Rows()
    live = loader(rows)
    stored_batch(live, rows, [("s1", turn("s1", 0))])
    batch = stepped(live, [("s1", turn("s1", 1))])
    batch.states["s1"].version += 100  # an item that broke the state half-way
    batch.rebuild("s1", NOW)
    live.stored(batch, 1.0)
    kept = live.live.take("s1")
    assert kept is batch.states["s1"] and kept.version == 2


@pytest.mark.parametrize("language", ["en", "zh"])
def test_a_live_state_steps_exactly_as_its_restored_row_would(language: str) -> None:
    messages = generate(3, 300, language).messages
    live = restored = None
    for n, message in enumerate(messages):
        item = Turn(turn_id=f"t{n}", session_id="chat", user_id="maya", seq=n, ts=NOW + n, message=message)
        if live is None or restored is None:
            live, restored = CORE.new_state(item), CORE.new_state(item)
        else:
            restored = SessionState.restore(restored.snapshot())
        assert CORE.on_turn(live, item, NOW + n) == CORE.on_turn(restored, item, NOW + n)
        assert live.snapshot() == restored.snapshot()
