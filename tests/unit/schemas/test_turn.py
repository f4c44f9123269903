import orjson
import pytest

from tests.unit.schemas.samples import BAD, GOOD, raw
from turnstream.schemas.turn import Turn, TurnError, decode_turn, encode_turn

LIMIT = 64 * 1024


@pytest.mark.parametrize(("name", "value"), GOOD, ids=[name for name, _ in GOOD])
def test_good_values_decode(name: str, value: bytes) -> None:
    turn = decode_turn(value, LIMIT)
    assert turn.message == orjson.loads(value)["message"]


@pytest.mark.parametrize(("name", "value", "reason"), BAD, ids=[name for name, _, _ in BAD])
def test_bad_values_name_their_reason(name: str, value: bytes, reason: str) -> None:
    with pytest.raises(TurnError) as error:
        decode_turn(value, LIMIT)
    assert error.value.reason == reason
    assert str(error.value) == f"{reason}: {error.value.detail}"
    assert error.value.detail


def test_oversize_is_checked_before_parsing() -> None:
    value = b"\xff" * 101  # neither UTF-8 nor JSON: only the size check can name it
    with pytest.raises(TurnError) as error:
        decode_turn(value, 100)
    assert (error.value.reason, error.value.detail) == ("oversize", "101 bytes, limit 100")
    assert decode_turn(raw(), len(raw())).turn_id == "t1"


def test_schema_detail_names_the_field_path() -> None:
    with pytest.raises(TurnError) as error:
        decode_turn(raw(message={"role": "tool", "content": "x"}), LIMIT)
    assert error.value.detail == "message: tool message has no string tool_call_id"
    with pytest.raises(TurnError) as error:
        decode_turn(raw(seq=-1), LIMIT)
    assert error.value.detail.startswith("seq: ")


def test_unsafe_session_id_detail_quotes_the_id() -> None:
    with pytest.raises(TurnError) as error:
        decode_turn(raw(session_id="a b"), LIMIT)
    assert error.value.detail == "session_id 'a b' has characters outside [A-Za-z0-9._:-]"


@pytest.mark.parametrize(
    ("tenant", "session_id", "key"),
    [
        (None, "s1", "s1"),
        ("acme", "s1", "acme:s1"),
        ("acme", "user:7", "acme:user%3A7"),
        (None, "co:lide", "co%3Alide"),
    ],
)
def test_session_key(tenant: str | None, session_id: str, key: str) -> None:
    assert decode_turn(raw(tenant=tenant, session_id=session_id), LIMIT).session_key == key


def test_turn_is_frozen() -> None:
    turn = decode_turn(raw(), LIMIT)
    with pytest.raises(ValueError):
        turn.turn_id = "other"  # type: ignore[misc]


def test_encode_keeps_the_callers_fields_and_message() -> None:
    message = {"content": "hi", "role": "user", "name": "ann"}  # unusual key order and an extra key
    turn = Turn(turn_id="t1", session_id="s", message=message, seq=2)
    assert encode_turn(turn) == orjson.dumps({"turn_id": "t1", "session_id": "s", "seq": 2, "message": message})
    assert decode_turn(encode_turn(turn), LIMIT) == turn
