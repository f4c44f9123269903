"""Kafka's Java murmur2, transcribed, to check the producer's partitioning against."""

from __future__ import annotations


def _int32(value: int) -> int:
    value &= 0xFFFFFFFF
    return value - (1 << 32) if value & 0x80000000 else value


def java_murmur2(data: bytes) -> int:
    """Utils.murmur2 transcribed with Java's int arithmetic (signed 32-bit, >>> as unsigned shift)."""
    m, r = 0x5BD1E995, 24
    h = _int32(0x9747B28C ^ len(data))
    for i in range(0, len(data) // 4 * 4, 4):
        k = int.from_bytes(data[i : i + 4], "little")
        k = _int32(k * m)
        k ^= (k & 0xFFFFFFFF) >> r
        k = _int32(k * m)
        h = _int32(_int32(h * m) ^ k)
    tail = data[len(data) // 4 * 4 :]
    if len(tail) == 3:
        h ^= tail[2] << 16
    if len(tail) >= 2:
        h ^= tail[1] << 8
    if tail:
        h ^= tail[0]
        h = _int32(h * m)
    h = _int32(h ^ ((h & 0xFFFFFFFF) >> 13))
    h = _int32(h * m)
    return _int32(h ^ ((h & 0xFFFFFFFF) >> 15))


def java_partition(key: bytes, partitions: int) -> int:
    """The Java DefaultPartitioner's choice for a keyed record: toPositive(murmur2(key)) % partitions."""
    return (java_murmur2(key) & 0x7FFFFFFF) % partitions
