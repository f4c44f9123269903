"""Confirmations run behind their batches, strictly in order, and a failure stops every later one."""

from __future__ import annotations

import asyncio

import pytest

from turnstream.streams.confirmations import Confirmations, to_the_end


class Broken(Exception):
    pass


def never_fails(error: BaseException) -> None:
    raise AssertionError(f"no confirmation should fail here: {error!r}")


async def test_a_confirmation_waits_for_the_one_before_it_but_not_its_caller() -> None:
    done: list[str] = []
    first_may_finish = asyncio.Event()

    async def first() -> None:
        await first_may_finish.wait()
        done.append("first")

    async def second() -> None:
        done.append("second")

    confirmations = Confirmations(never_fails)
    confirmations.add(first)
    confirmations.add(second)  # returns at once: the caller goes on with its next batch
    await asyncio.sleep(0.01)
    assert done == []  # the second is held behind the first, however quick it is
    first_may_finish.set()
    await confirmations.drain()
    assert done == ["first", "second"]


async def test_a_failure_is_told_once_and_no_later_confirmation_runs() -> None:
    told: list[BaseException] = []
    ran: list[str] = []

    async def fails() -> None:
        raise Broken("the broker refused the rows")

    async def later() -> None:
        ran.append("later")

    confirmations = Confirmations(told.append)
    confirmations.add(fails)
    confirmations.add(later)
    confirmations.add(later)
    with pytest.raises(Broken):
        await confirmations.drain()
    assert ran == []
    assert len(told) == 1 and isinstance(told[0], Broken)
    with pytest.raises(Broken):
        confirmations.check()


async def test_the_failure_is_told_while_nothing_waits_for_it() -> None:
    told = asyncio.Event()

    async def fails() -> None:
        raise Broken("refused")

    confirmations = Confirmations(lambda error: told.set())
    confirmations.add(fails)
    await asyncio.wait_for(told.wait(), 1.0)  # nobody drained or checked: the callback alone noticed


async def test_check_passes_while_confirmations_run_or_succeeded() -> None:
    release = asyncio.Event()
    confirmations = Confirmations(never_fails)
    confirmations.check()  # none yet
    confirmations.add(release.wait)
    confirmations.check()  # still running
    release.set()
    await confirmations.drain()
    confirmations.check()


async def test_drain_finishes_every_confirmation_before_a_cancellation_goes_through() -> None:
    done: list[str] = []
    release = asyncio.Event()

    async def slow() -> None:
        await release.wait()
        done.append("slow")

    confirmations = Confirmations(never_fails)
    confirmations.add(slow)
    draining = asyncio.ensure_future(confirmations.drain())
    await asyncio.sleep(0.01)
    draining.cancel()
    await asyncio.sleep(0.01)
    assert not draining.done()  # still waiting for the confirmation, cancelled or not
    release.set()
    with pytest.raises(asyncio.CancelledError):
        await draining
    assert done == ["slow"]


async def test_to_the_end_completes_the_work_and_then_lets_the_cancellation_through() -> None:
    finished: list[bool] = []

    async def work() -> None:
        await asyncio.sleep(0.05)
        finished.append(True)

    running = asyncio.ensure_future(to_the_end(work()))
    await asyncio.sleep(0.01)
    running.cancel()
    with pytest.raises(asyncio.CancelledError):
        await running
    assert finished == [True]
