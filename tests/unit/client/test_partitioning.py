import pytest
from aiokafka.partitioner import DefaultPartitioner, murmur2

from tests.unit.client.java_murmur2 import java_murmur2
from turnstream.client import TurnProducer
from turnstream.settings import Settings

# org.apache.kafka.common.utils.Utils.murmur2 of UTF-8 keys, as Akka's Murmur2Spec checks its port
JAVA_MURMUR2 = {"1": -1993445489, "12": 126087238, "123": -267702483, "1234": -1614185708, "12345": -1188365604}
# Java DefaultPartitioner, toPositive(murmur2(key)) % 8, worked out by hand from the above
JAVA_PARTITION_OF_8 = {"1": 7, "12": 6, "123": 5, "1234": 4, "12345": 4}


@pytest.mark.parametrize(("key", "expected"), JAVA_MURMUR2.items())
def test_transcription_reproduces_the_java_vectors(key: str, expected: int) -> None:
    assert java_murmur2(key.encode()) == expected


@pytest.mark.parametrize("key", [*JAVA_MURMUR2, "", "acme:session-42", "s" * 128, "租户:会话", "a:b.c_d-e"])
def test_aiokafka_murmur2_is_the_java_one(key: str) -> None:
    assert murmur2(key.encode()) == java_murmur2(key.encode()) & 0xFFFFFFFF  # aiokafka: same bits, unsigned


@pytest.mark.parametrize(("key", "partition"), JAVA_PARTITION_OF_8.items())
def test_turn_producer_partitions_like_the_java_client(key: str, partition: int) -> None:
    producer = TurnProducer(Settings(kafka_url="kafka://127.0.0.1:9"))
    partitioner = producer._options["partitioner"]
    assert isinstance(partitioner, DefaultPartitioner)
    assert partitioner(key.encode(), list(range(8)), list(range(8))) == partition
