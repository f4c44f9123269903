"""The parts of SyncTurnProducer and `record` that need no broker."""

from __future__ import annotations

import asyncio
import time

import pytest

from turnstream.client import ProducerClosedError, ProducerStartError, RecordTimeout, SyncTurnProducer, WaitResult
from turnstream.client.gateway import check_acknowledged, fresh_version, prepared
from turnstream.schemas.turn import Turn, TurnError
from turnstream.settings import Settings

NOWHERE = Settings(kafka_url="kafka://127.0.0.1:9")
"""A broker address where nothing listens (the discard port)."""


def turn(number: int, session_id: str = "s-1") -> dict[str, object]:
    return {"turn_id": f"t-{number}", "session_id": session_id, "message": {"role": "user", "content": "hi"}}


def test_prepared_takes_one_turn_or_a_session_s_turns_in_order() -> None:
    [(single, value)] = prepared(turn(1))
    assert single.turn_id == "t-1" and value.startswith(b'{"turn_id":"t-1"')
    assert [t.turn_id for t, _ in prepared([turn(1), Turn.model_validate(turn(2))])] == ["t-1", "t-2"]


@pytest.mark.parametrize("turns", [[], [turn(1), turn(2, "s-2")]], ids=["none", "two sessions"])
def test_prepared_refuses_anything_but_one_session(turns: list[dict[str, object]]) -> None:
    with pytest.raises(ValueError, match="one session"):
        prepared(turns)


def test_prepared_validates_every_turn_before_any_is_sent() -> None:
    with pytest.raises(TurnError, match="^unsafe_session_id"):
        prepared([turn(1), turn(2, "a b")])


async def test_a_broker_error_wins_over_the_time_out() -> None:
    failed, waiting = asyncio.get_running_loop().create_future(), asyncio.get_running_loop().create_future()
    failed.set_exception(OSError("refused"))
    last = Turn.model_validate(turn(2))
    with pytest.raises(OSError, match="refused"):
        check_acknowledged([failed, waiting], {waiting}, last, 1.0)
    with pytest.raises(RecordTimeout, match="'s-1': turn 't-2' not acknowledged by the broker within 1 s"):
        check_acknowledged([waiting], {waiting}, last, 1.0)
    waiting.cancel()


def test_fresh_version_is_the_including_context_s() -> None:
    last = Turn.model_validate(turn(2))
    with pytest.raises(RecordTimeout) as raised:
        fresh_version(WaitResult(None, False), last, 2.5)
    assert isinstance(raised.value, TimeoutError) and (raised.value.session_key, raised.value.turn_id) == ("s-1", "t-2")


def test_an_invalid_turn_is_refused_in_the_caller_before_the_producer_starts() -> None:
    producer = SyncTurnProducer(NOWHERE)
    with pytest.raises(TurnError, match="^schema"):
        producer.send({"turn_id": "t-1", "session_id": "s-1"})
    assert producer._loop is None  # nothing started, nothing queued


def test_a_start_without_a_broker_fails_in_one_line() -> None:
    started = time.monotonic()
    with pytest.raises(ProducerStartError) as raised:
        SyncTurnProducer(NOWHERE).send(turn(1))
    assert str(raised.value).startswith("cannot start the turn producer on 127.0.0.1:9: ")
    assert "\n" not in str(raised.value) and time.monotonic() - started < 30


def test_a_producer_closed_before_it_started_refuses_sends() -> None:
    producer = SyncTurnProducer(NOWHERE)
    producer.close()
    producer.close()
    with pytest.raises(ProducerClosedError, match="closed"):
        producer.send(turn(1))
