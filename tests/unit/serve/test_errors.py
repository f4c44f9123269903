"""Which failure gets which status, body and headers."""

from __future__ import annotations

import pytest
from aiokafka.errors import KafkaConnectionError, KafkaTimeoutError
from pydantic import ValidationError
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from turnstream.client.errors import ProducerBufferFull, RecordTimeout
from turnstream.operations.erasure import ErasureNotConfirmed
from turnstream.serve.errors import NOT_FOUND, BrokerNotReady, InvalidRequest, NotFound, failure_of, reply_body
from turnstream.serve.models import RecordRequest, SearchRequest
from turnstream.serve.scope import BadTurns, NoOwner, OutOfScope


def invalid(model: type, data: object) -> InvalidRequest:
    with pytest.raises(ValidationError) as caught:
        model.model_validate(data)
    return InvalidRequest.of(caught.value)


def test_a_malformed_turn_names_its_field_by_pydantics_location() -> None:
    error = invalid(RecordRequest, {"turns": [{"turn_id": "t1", "session_id": "s1", "message": {"role": "bogus"}}]})
    failure = failure_of(error)
    assert failure.status == 422 and failure.body.field == "turns.0.message" and "bogus" in failure.body.detail
    missing = failure_of(
        invalid(RecordRequest, {"turns": [{"session_id": "s1", "message": {"role": "user", "content": "x"}}]})
    )
    assert missing.body.field == "turns.0.turn_id"
    assert failure_of(invalid(RecordRequest, {"turns": []})).body.field == "turns"
    assert failure_of(invalid(RecordRequest, {"turns": [], "extra": 1})).status == 422


def test_a_check_across_fields_has_no_field_but_says_why() -> None:
    failure = failure_of(invalid(SearchRequest, {"text": "x"}))
    assert failure.status == 422 and failure.body.field is None and "exactly one" in failure.body.detail
    assert "field" not in reply_body(failure.body)


def test_another_tenants_id_reads_exactly_as_an_unknown_one() -> None:
    assert failure_of(OutOfScope("s1")).body == failure_of(NotFound("s1")).body == NOT_FOUND
    assert failure_of(OutOfScope("s1")).status == 404 and "s1" not in NOT_FOUND.detail
    assert failure_of(BadTurns("turns.0.session_id", "x")).status == 422
    assert failure_of(NoOwner("give user_id or session_id")).body.detail == "give user_id or session_id"


@pytest.mark.parametrize(
    "error",
    [
        KafkaConnectionError(),
        KafkaTimeoutError(),
        ProducerBufferFull(),
        BrokerNotReady(),
        RecordTimeout("s", "t", 1.0, "acknowledged"),
    ],
)
def test_a_broker_failure_is_503_with_retry_after_and_says_the_record_was_not_acknowledged(error: Exception) -> None:
    failure = failure_of(error, recording=True)
    assert failure.status == 503 and failure.headers["Retry-After"].isdigit()
    assert failure.body.error == "unavailable" and failure.body.acknowledged is False
    assert failure_of(error).body.acknowledged is None  # outside a record there is nothing to acknowledge


@pytest.mark.parametrize("error", [RedisConnectionError("down"), RedisTimeoutError("slow")])
def test_redis_failing_during_a_record_means_the_broker_had_every_turn(error: Exception) -> None:
    failure = failure_of(error, recording=True)
    assert failure.status == 503 and "Retry-After" in failure.headers and failure.body.acknowledged is True


def test_an_unconfirmed_erasure_is_503_and_anything_else_500_without_detail() -> None:
    assert failure_of(ErasureNotConfirmed("no worker")).status == 503
    internal = failure_of(KeyError("secret detail"))
    assert internal.status == 500 and "secret" not in internal.body.detail
