from aiokafka.partitioner import DefaultPartitioner

from turnstream.agents.expiry import heap_trimmer
from turnstream.schemas.ids import partition_of


def test_partition_of_is_where_the_producer_puts_the_session() -> None:
    keys = ["s-1", "acme:s-7", "会话", ""]
    for partitions in (1, 4, 8, 12):
        expected = [DefaultPartitioner()(key.encode(), list(range(partitions)), []) for key in keys]
        assert [partition_of(key, partitions) for key in keys] == expected


def test_the_heap_trimmer_is_glibc_s_malloc_trim_and_none_where_there_is_none() -> None:
    trim = heap_trimmer()
    assert trim is not None and trim() in (0, 1)  # 1: memory was handed back
    assert heap_trimmer(lambda: None) is None
    assert heap_trimmer(lambda: "libturnstream-absent.so.0") is None
