"""Every Redis client is built here, from the settings.

`redis_client` and `sync_redis_client` apply TURNSTREAM_REDIS_PASSWORD and TURNSTREAM_REDIS_CA_FILE, and
return redis-py's cluster client when TURNSTREAM_REDIS_CLUSTER is set: it learns the other nodes from the
one in the URL (or the first that answers of several, `redis://n1:6379,n2:6379/0`) and sends each command
(each script) to its key's slot; or a client of the primary that Sentinel names, with
TURNSTREAM_REDIS_SENTINEL_MASTER.
"""

from __future__ import annotations

import asyncio
import re
from typing import TYPE_CHECKING, Any

from turnstream.connections import ConnectionSettingsError
from turnstream.settings import RedisSettings

if TYPE_CHECKING:
    from redis import Redis as SyncRedis
    from redis.asyncio import Redis, RedisCluster

_SENTINEL_URL = re.compile(r"^(?P<scheme>rediss?)://(?:(?P<user>[^@/]*)@)?(?P<hosts>[^/?#@]+)(?P<tail>.*)$")


def redis_client(settings: RedisSettings, **options: Any) -> Redis:
    """An asyncio client on settings.redis_url (a RedisCluster with TURNSTREAM_REDIS_CLUSTER, Sentinel's primary
    with TURNSTREAM_REDIS_SENTINEL_MASTER), with TURNSTREAM_REDIS_PASSWORD unless the URL has one."""
    from redis.asyncio import Redis, RedisCluster
    from redis.asyncio.cluster import ClusterNode
    from redis.asyncio.sentinel import Sentinel

    client: Redis = _topology_client(settings, options, Redis, (RedisCluster, ClusterNode), Sentinel)
    return client


def sync_redis_client(settings: RedisSettings, **options: Any) -> SyncRedis:
    """The same as redis_client, for threads: a redis.Redis or redis.RedisCluster (the synchronous ContextClient's)."""
    from redis import Redis as SyncRedis
    from redis import RedisCluster
    from redis.cluster import ClusterNode
    from redis.sentinel import Sentinel

    client: SyncRedis = _topology_client(settings, options, SyncRedis, (RedisCluster, ClusterNode), Sentinel)
    return client


def _topology_client(
    settings: RedisSettings, options: dict[str, Any], plain: Any, cluster: tuple[Any, Any], sentinel: Any
) -> Any:
    """The client of the configured topology, from the classes of one redis-py flavour (asyncio or threads):
    the plain client, the cluster client and its node class, the Sentinel manager.

    The cluster client offers the commands, scripts and pipelines turnstream uses under the same names.
    """
    url, options = _redis_url_and_options(settings, options)
    if settings.redis_sentinel_master:
        sentinels, options = sentinel_options(url, options)
        return sentinel(sentinels).master_for(settings.redis_sentinel_master, **options)
    if settings.redis_cluster:
        client, node = cluster
        if "," not in url:
            return client.from_url(url, **options)
        # several nodes to start from: the client still reaches the cluster when the first of them is down
        nodes, options = hosts_and_options(url, options, "cluster node")
        if options.pop("db", 0) != 0:
            raise ConnectionSettingsError("a Redis Cluster has database 0 only: end the URL with /0")
        return client(startup_nodes=[node(host, port) for host, port in nodes], **options)
    return plain.from_url(url, **options)


def sentinel_options(url: str, options: dict[str, Any]) -> tuple[list[tuple[str, int]], dict[str, Any]]:
    """The sentinels a URL lists (`redis://[:password@]s1:26379,s2:26379/db`) and the options of the primary's
    connections: the URL's password, db and query, TLS for rediss://. The sentinels themselves are asked
    without password or TLS (redis-py's default)."""
    return hosts_and_options(url, options, "sentinel")


def hosts_and_options(url: str, options: dict[str, Any], what: str) -> tuple[list[tuple[str, int]], dict[str, Any]]:
    """The servers a URL lists (`redis://[:password@]h1:port,h2:port/db`) and the options of the connections it
    stands for: the URL's password, db and query, TLS for rediss://; what the URL says wins over `options`."""
    from redis.connection import parse_url

    found = _SENTINEL_URL.match(url)
    if found is None:
        raise ConnectionSettingsError(f"bad {what} URL: use redis://host1:port,host2:port/0")
    hosts = []
    for host in found["hosts"].split(","):
        name, _, port = host.strip().rpartition(":")
        if not name or not port.isdigit():
            raise ConnectionSettingsError(f"bad {what} address {host!r}: use host:port")
        hosts.append((name, int(port)))
    user = f"{found['user']}@" if found["user"] is not None else ""
    parsed = parse_url(f"{found['scheme']}://{user}{hosts[0][0]}:{hosts[0][1]}{found['tail']}")
    for routed in ("host", "port", "connection_class"):  # the pool asks Sentinel (or the cluster) where to connect
        parsed.pop(routed, None)
    if found["scheme"] == "rediss":
        parsed["ssl"] = True
    return hosts, {**options, **parsed}  # as from_url: what the URL says wins


def _redis_url_and_options(settings: RedisSettings, options: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    if not settings.redis_url:
        raise ValueError("no Redis configured (TURNSTREAM_REDIS_URL)")
    if settings.redis_password is not None:
        # redis-py lets a password inside the URL take precedence over this one
        options.setdefault("password", settings.redis_password.get_secret_value())
    if settings.redis_ca_file is not None:
        # rediss:// alone turns TLS on and verifies against the system CAs
        options.setdefault("ssl_ca_certs", str(settings.redis_ca_file))
    return settings.redis_url, options


async def ping(redis: Redis | RedisCluster, timeout: float | None = None) -> bool:
    """Whether Redis answers a PING (within `timeout` seconds when given); raises what the client raises."""
    answer = redis.ping()
    return bool(await (asyncio.wait_for(answer, timeout) if timeout is not None else answer))
