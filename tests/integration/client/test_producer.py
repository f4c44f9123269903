import logging

import orjson
import pytest
from aiokafka.errors import KafkaError
from aiokafka.structs import ConsumerRecord

from tests.support.services import on_each_broker, on_tansu
from tests.support.topics import consume
from tests.unit.client.java_murmur2 import java_partition
from turnstream.client import TurnProducer
from turnstream.kafka.admin import ensure_topics
from turnstream.schemas.turn import Turn, TurnError
from turnstream.settings import Settings


@pytest.fixture
async def topic_settings(settings: Settings) -> Settings:
    await ensure_topics(settings)
    return settings


def make_turn(number: int, session_id: str, tenant: str | None = None) -> Turn:
    message = {"role": "user", "content": f"turn {number}", "name": "ann"}
    return Turn(turn_id=f"t{number}", session_id=session_id, tenant=tenant, seq=number, message=message)


@on_each_broker
async def test_round_trip_keyed_by_session_on_the_java_partition(
    topic_settings: Settings, caplog: pytest.LogCaptureFixture, broker: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("turnstream.kafka.idempotence._warned", set())  # warned once a process: not by earlier tests
    turns = [make_turn(n, "s-a", tenant="acme") for n in range(5)] + [make_turn(n, "s-b") for n in range(5)]
    with caplog.at_level(logging.WARNING, logger="turnstream"):
        async with TurnProducer(topic_settings) as producer:  # idempotent_producer="auto"
            for turn in turns:
                await producer.send(turn)
            await producer.flush()
    # Apache Kafka issues producer ids; the embedded broker does not, and the one warning says so
    assert producer.idempotent == (broker == "kafka")
    assert len([r for r in caplog.records if "producer ids" in r.getMessage()]) == (0 if broker == "kafka" else 1)

    records = await consume(topic_settings, len(turns))
    by_key: dict[bytes, list[ConsumerRecord]] = {}
    for record in records:
        by_key.setdefault(record.key, []).append(record)
    assert set(by_key) == {b"acme:s-a", b"s-b"}
    for key, group in by_key.items():
        assert {record.partition for record in group} == {java_partition(key, topic_settings.turn_partitions)}
        values = [orjson.loads(record.value) for record in sorted(group, key=lambda r: r.offset)]
        assert [value["seq"] for value in values] == list(range(5))  # one partition: in order
        assert values[0]["message"] == {"role": "user", "content": "turn 0", "name": "ann"}


async def test_send_raw_sends_bytes_as_given(topic_settings: Settings) -> None:
    async with TurnProducer(topic_settings.model_copy(update={"idempotent_producer": "off"})) as producer:
        await (await producer.send_raw(b"k", b"\xffnot json"))
    [record] = await consume(topic_settings, 1)
    assert (record.key, record.value) == (b"k", b"\xffnot json")


async def test_a_dict_is_validated_and_sent_as_given(topic_settings: Settings) -> None:
    given = {"session_id": "s", "message": {"content": "hi", "role": "user"}, "turn_id": "t1", "extra": 1}
    async with TurnProducer(topic_settings) as producer:
        with pytest.raises(TurnError, match="^unsafe_session_id"):
            await producer.send({**given, "session_id": "a b"})
        await (await producer.send(given))
    [record] = await consume(topic_settings, 1)
    assert (record.key, record.value) == (b"s", orjson.dumps(given))


@on_tansu
async def test_idempotence_on_fails_on_a_broker_without_producer_ids(topic_settings: Settings) -> None:
    with pytest.raises(KafkaError):
        async with TurnProducer(topic_settings.model_copy(update={"idempotent_producer": "on"})):
            pass


async def test_idempotence_on_is_granted_by_apache_kafka(topic_settings: Settings, broker: str) -> None:
    if broker != "kafka":
        pytest.skip("TURNSTREAM_TEST_BROKER=tansu: the embedded broker issues no producer ids")
    async with TurnProducer(topic_settings.model_copy(update={"idempotent_producer": "on"})) as producer:
        await (await producer.send(make_turn(1, "s-idem")))
    assert producer.idempotent


async def test_send_before_start_is_a_clear_error(topic_settings: Settings) -> None:
    with pytest.raises(RuntimeError, match="not started"):
        await TurnProducer(topic_settings).send(make_turn(1, "s"))
