"""Every Redis key of one deployment (topic prefix), normalized, one JSON line each, sorted: two replays of the
same turns compare with `diff`. What depends on batch timing is left out: write times, timings, the version
each turn was applied at, the profile's compare-and-set version.

    python -m turnstream_tools.benchmarks.redis_dump redis://127.0.0.1:6379/0 turnstream > before.txt
"""

from __future__ import annotations

import sys
from typing import Any

import orjson
import redis

TIMES = ("updated_at", "timings", "created_at")


def _value(raw: bytes) -> Any:
    try:
        data = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return raw.decode("latin-1")
    if isinstance(data, dict):
        for name in TIMES:
            data.pop(name, None)
    return data


def dump(client: Any, prefix: str) -> list[str]:
    """`client` is a redis.Redis without decode_responses: its replies are bytes, which redis-py's types do not
    follow from the option."""
    lines = []
    for key in sorted(client.scan_iter(match=f"{prefix}:*", count=1000)):
        name, kind = key.decode()[len(prefix) :], client.type(key).decode()
        if name.startswith(":journal:"):
            continue
        value: Any
        if kind == "string":
            value = _value(client.get(key) or b"")
        elif kind == "hash":
            fields = client.hgetall(key)
            value = (
                sorted(f.decode() for f in fields)
                if ":memcreated:" in name
                else {f.decode("latin-1"): _value(v) for f, v in sorted(fields.items())}
            )
            if name.startswith(":profile:"):
                value.pop("version", None)
        elif kind == "set":
            value = sorted(m.decode("latin-1") for m in client.smembers(key))
        elif kind == "zset":
            pairs = [(m.decode("latin-1"), s) for m, s in client.zrange(key, 0, -1, withscores=True)]
            value = sorted(m for m, _ in pairs) if ":applied:" in name else pairs
        else:
            value = [v.decode("latin-1") for v in client.lrange(key, 0, -1)]
        lines.append(orjson.dumps([name, kind, value], option=orjson.OPT_SORT_KEYS).decode())
    return lines


if __name__ == "__main__":
    print("\n".join(dump(redis.Redis.from_url(sys.argv[1]), sys.argv[2])))
