import pytest

from turnstream.schemas.control import ForgetRequest, forget_marker, forget_record, is_forget_marker, parse_forget
from turnstream.schemas.turn import TurnError, decode_turn


def test_forget_record_round_trip_and_turns_are_not_forget_records() -> None:
    assert parse_forget(forget_record("acme:s-1", 1700.5)) == ForgetRequest("acme:s-1", 1700.5)
    turn = b'{"turn_id":"t","session_id":"s","message":{"role":"user","content":"forget it"}}'
    assert parse_forget(turn) is None
    assert parse_forget(b'{"forget": 1}') is None  # malformed: left to the turn decoder, which dead-letters it


def test_a_forget_record_is_never_a_valid_turn() -> None:
    with pytest.raises(TurnError):
        decode_turn(forget_record("s", 1.0), 1 << 20)


def test_forget_marker_is_recognised_and_no_session_row_looks_like_one() -> None:
    assert is_forget_marker(forget_marker(12.0))
    assert not is_forget_marker(None)
    assert not is_forget_marker(b'{"v":2,"session_id":"s"}')
