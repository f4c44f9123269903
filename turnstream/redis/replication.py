"""Whose history a Redis holds: its replication id, and what a change of it tells the re-syncs.

Redis replication is asynchronous: a primary acknowledges a write before its replica has it. A replica that
Sentinel promotes after its primary died starts a history of its own, under a new replication id (INFO's
`master_replid`; the old one moves to `master_replid2`), and may lack writes the old primary acknowledged.
A primary restarted from its files got a new id too (Redis 6.2). So the re-syncs keep, in Redis beside the
data, the id under which they last found it whole (a mark): a mark naming another id means acknowledged writes
may be lost, and what is missing must be looked for everywhere, not only where everything is gone.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from enum import Enum
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from redis.asyncio import Redis, RedisCluster

_REPLICATION_ID = re.compile(r"[0-9a-f]{40}(,[0-9a-f]{40})*")
"""One primary's `master_replid`, or a cluster's, one per primary, sorted and joined by commas."""


class Lineage(Enum):
    """What a mark says of the data it was written beside, against the primary's replication id now."""

    UNMARKED = "unmarked"
    """No mark: this Redis lost everything (or never had the data); whatever is missing is missing whole."""
    FIRST_SIGHT = "first sight"
    """A mark without an id (written before ids were kept, or the id cannot be read): nothing to compare, so the
    data is taken as whole and the current id marked."""
    SAME = "same"
    """Found whole under this very history: only a loss of everything can have happened since."""
    CHANGED = "changed"
    """Found whole under another history (a failover, a restart): acknowledged writes may be lost anywhere."""


def lineage(marked: str | None, current: str | None) -> Lineage:
    """The mark `marked` (None when absent) against `current`, the primary's replication id (None if unknown)."""
    if marked is None:
        return Lineage.UNMARKED
    if current is None or not is_replication_id(marked):
        return Lineage.FIRST_SIGHT
    return Lineage.SAME if marked == current else Lineage.CHANGED


def is_replication_id(text: str) -> bool:
    return _REPLICATION_ID.fullmatch(text) is not None


def replication_id_of(info: Mapping[str, Any]) -> str | None:
    """The replication id in an `INFO replication` reply: one server's (a dict of its fields), or a cluster's (a
    dict of such dicts, one per primary); None when the server does not report one."""
    if "master_replid" in info or "role" in info:
        found = info.get("master_replid")
        return str(found) if found else None
    ids = [replication_id_of(reply) for reply in info.values() if isinstance(reply, Mapping)]
    return ",".join(sorted(i for i in ids if i)) if ids and all(ids) else None


async def replication_id(redis: Redis | RedisCluster) -> str | None:
    """The replication id of the primary the client writes to, or of every primary of a cluster (one INFO call per
    primary); None when the server does not report one."""
    from redis.asyncio import RedisCluster

    if isinstance(redis, RedisCluster):
        info = await redis.info("replication", target_nodes=RedisCluster.PRIMARIES)
    else:
        info = await redis.info("replication")
    return replication_id_of(info)
