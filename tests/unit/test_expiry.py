
from aiokafka.partitioner import DefaultPartitioner

from turnstream.agents.expiry import heap_trimmer, idle_sessions, sweep_interval
from turnstream.schemas.ids import partition_of


def test_idle_means_strictly_older_than_the_ttl() -> None:
    touched = {"a": 100.0, "b": 140.0, "c": 141.0}
    assert idle_sessions(touched, now=200.0, ttl_seconds=60) == ["a"]
    assert idle_sessions(touched, now=201.5, ttl_seconds=60) == ["a", "b", "c"]


def test_partition_of_is_where_the_producer_puts_the_session() -> None:
    keys = ["s-1", "acme:s-7", "会话", ""]
    for partitions in (1, 4, 8, 12):
        expected = [DefaultPartitioner()(key.encode(), list(range(partitions)), []) for key in keys]
        assert [partition_of(key, partitions) for key in keys] == expected


def test_sweep_interval_is_a_tenth_of_the_ttl_within_bounds() -> None:
    assert sweep_interval(4) == 0.5
    assert sweep_interval(100) == 10
    assert sweep_interval(7 * 24 * 3600) == 60


def test_the_heap_trimmer_is_glibc_s_malloc_trim_and_none_where_there_is_none() -> None:
    trim = heap_trimmer()
    assert trim is not None and trim() in (0, 1)  # 1: memory was handed back
    assert heap_trimmer(lambda: None) is None
    assert heap_trimmer(lambda: "libturnstream-absent.so.0") is None
