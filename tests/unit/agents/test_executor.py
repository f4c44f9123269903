"""The executor's delivery guarantee, with in-memory sinks: the order of the writes, nothing acknowledged
before every stage has stored its effects, and what a failure at each stage leaves for the next owner."""

from __future__ import annotations

import asyncio
from dataclasses import fields

import pytest

from turnstream.agents.executor import PLAN, Sinks, to_the_end
from turnstream.agents.throttle import TokenBucket
from turnstream.schemas.control import forget_record
from turnstream.testing import NOW, StageFailed, World, conversation, executor, record, turn_value

pytestmark = pytest.mark.unit


def test_the_plan_names_every_sink_once() -> None:
    assert sorted(PLAN) == sorted(field.name for field in fields(Sinks)) and len(set(PLAN)) == len(PLAN)


def test_the_order_of_the_writes_is_the_plan_and_acknowledgement_comes_last() -> None:
    world = World()
    events = conversation()
    asyncio.run(executor(world).store_then_acknowledge(events, world.acknowledge))
    assert world.written == list(PLAN)
    assert world.acknowledged == [event.message.offset for event in events]


def test_the_plan_keeps_the_orders_the_guarantee_rests_on() -> None:
    before = [
        ("release", "table"),
        ("memory", "redis"),
        ("redis", "table"),
        ("journal", "table"),
        ("dead_letter", "table"),
        ("forward", "table"),
        ("table", "forget"),
        ("table", "summary_request"),
    ]
    assert all(PLAN.index(first) < PLAN.index(then) for first, then in before)


def test_one_batch_stores_what_its_records_ask_for() -> None:
    world = World()
    asyncio.run(executor(world).store_then_acknowledge(conversation(), world.acknowledge))
    stored = world.stored()
    assert stored["rows"] == {"s1": 3, "s2": "erased"}  # s2's turn before the forget and the late one leave no row
    assert stored["contexts"] == {"s1": 3}  # the erased session's context is never written
    assert stored["dead"] == {(2, "not_json")}
    assert stored["forwarded"] == {b"s3"}
    assert stored["confirmed"] == {"s2"}
    assert stored["memories"] and all(owner == "maya" for owner, _ in stored["memories"])


@pytest.mark.parametrize("stage", PLAN)
def test_a_failed_stage_acknowledges_nothing_and_runs_no_later_stage(stage: str) -> None:
    world = World(fail_at=stage)
    with pytest.raises(StageFailed):
        asyncio.run(executor(world).store_then_acknowledge(conversation(), world.acknowledge))
    assert world.written == list(PLAN[: PLAN.index(stage)])
    assert world.acknowledged == []
    if PLAN.index(stage) <= PLAN.index("table"):
        assert world.rows == {}  # the next owner starts from the rows the last complete batch left


@pytest.mark.parametrize("stage", PLAN)
def test_the_next_owner_replaying_a_failed_batch_stores_what_one_clean_run_stores(stage: str) -> None:
    clean = World()
    asyncio.run(executor(clean).store_then_acknowledge(conversation(), clean.acknowledge))
    world = World(fail_at=stage)
    with pytest.raises(StageFailed):
        asyncio.run(executor(world).store_then_acknowledge(conversation(), world.acknowledge))
    world.fail_at = None
    # nothing was acknowledged: the partition's next owner (a new executor) gets the same records again
    asyncio.run(executor(world).store_then_acknowledge(conversation(), world.acknowledge))
    assert world.stored() == clean.stored()
    assert world.acknowledged == clean.acknowledged


def test_a_replay_after_the_rows_were_stored_changes_no_version() -> None:
    world = World(fail_at="forget")
    with pytest.raises(StageFailed):
        asyncio.run(executor(world).store_then_acknowledge(conversation(), world.acknowledge))
    world.fail_at = None
    before = dict(world.contexts)
    asyncio.run(executor(world).store_then_acknowledge(conversation(), world.acknowledge))
    assert world.contexts == before and world.confirmed == {"s2"}


def test_a_batch_cancelled_midway_is_stored_and_acknowledged_whole_before_the_cancellation() -> None:
    world = World()
    events = [record(turn_value("s1", n, f"turn {n}"), b"s1", n) for n in range(3)]

    async def main() -> None:
        run = executor(world)
        slow_table = run.sinks.table

        class Slow:
            async def write(self, batch, done):  # type: ignore[no-untyped-def]
                await asyncio.sleep(0.05)
                await slow_table.write(batch, done)

        object.__setattr__(run.sinks, "table", Slow())
        task = asyncio.ensure_future(to_the_end(run.store_then_acknowledge(events, world.acknowledge)))
        await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())
    assert world.written == list(PLAN) and world.acknowledged == [0, 1, 2]


@pytest.mark.parametrize("stage", PLAN)
def test_the_same_worker_replaying_a_failed_batch_stores_what_one_clean_run_stores(stage: str) -> None:
    clean = World()
    first = [record(turn_value("s1", 0, "Lisbon, 3500 EUR."), b"s1", 0)]
    run = executor(clean)
    for events in (first, conversation()):
        asyncio.run(run.store_then_acknowledge(events, clean.acknowledge))
    world = World()
    run = executor(world)  # one worker throughout: s1's state is live after the first batch
    asyncio.run(run.store_then_acknowledge(first, world.acknowledge))
    world.fail_at = stage
    with pytest.raises(StageFailed):
        asyncio.run(run.store_then_acknowledge(conversation(), world.acknowledge))
    assert len(run.stepper.loader.live) == 0  # none of the failed batch's half-applied states is live
    world.fail_at = None
    asyncio.run(run.store_then_acknowledge(conversation(), world.acknowledge))
    assert world.stored() == clean.stored()


def test_a_session_s_next_batch_steps_its_live_state_not_its_row() -> None:
    world = World()
    run = executor(world)
    asyncio.run(run.store_then_acknowledge([record(turn_value("s1", 0, "Lisbon."), b"s1", 0)], world.acknowledge))
    world.rows["s1"] = b"not a row"  # were the row restored, the turn would fail and be dead-lettered
    asyncio.run(run.store_then_acknowledge([record(turn_value("s1", 1, "And Porto."), b"s1", 1)], world.acknowledge))
    assert world.dead == [] and world.contexts == {"s1": 2}


def test_an_erased_session_s_live_state_goes_with_it() -> None:
    world = World()
    run = executor(world)
    batches = [
        [record(turn_value("s1", 0, "Lisbon."), b"s1", 0)],
        [record(forget_record("s1", NOW), b"s1", 1)],
        [record(turn_value("s1", 1, "a late turn"), b"s1", 2)],
    ]
    for events in batches:
        asyncio.run(run.store_then_acknowledge(events, world.acknowledge))
    assert world.stored()["rows"] == {"s1": "erased"} and world.contexts == {"s1": 1}


def test_a_throttled_executor_waits_for_its_tokens_before_it_steps_a_batch(monkeypatch: pytest.MonkeyPatch) -> None:
    waits: list[float] = []

    async def sleep(seconds: float) -> None:
        waits.append(seconds)

    monkeypatch.setattr(asyncio, "sleep", sleep)
    world = World()
    events = conversation()
    throttled = executor(world)
    throttled.throttle = TokenBucket(rate=2, burst=1)
    asyncio.run(throttled.store_then_acknowledge(events, world.acknowledge))
    assert waits == [pytest.approx((len(events) - 1) / 2)] and world.written == list(PLAN)
