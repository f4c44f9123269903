"""Connection options from the settings, in one place: every Kafka client and every Redis client is built here.

`kafka_options` feeds aiokafka (TurnProducer, the admin client, start-up checks); `faust_credentials`
feeds Faust's `broker_credentials`, which Faust turns into the same aiokafka options for its consumer,
producer and topic creation. `redis_client` and `sync_redis_client` apply TURNSTREAM_REDIS_PASSWORD and
TURNSTREAM_REDIS_CA_FILE, and return redis-py's cluster client when TURNSTREAM_REDIS_CLUSTER is set: it
learns the other nodes from the one in the URL and sends each command (each script) to its key's slot;
or a client of the primary that Sentinel names, with TURNSTREAM_REDIS_SENTINEL_MASTER.
"""

from __future__ import annotations

import asyncio
import re
import ssl
from typing import TYPE_CHECKING, Any

from turnstream import tls
from turnstream.settings import SASL_PROTOCOLS, TLS_PROTOCOLS, Settings

if TYPE_CHECKING:
    from faust.types.auth import CredentialsT
    from redis import Redis as SyncRedis
    from redis.asyncio import Redis


_SENTINEL_URL = re.compile(r"^(?P<scheme>rediss?)://(?:(?P<user>[^@/]*)@)?(?P<hosts>[^/?#@]+)(?P<tail>.*)$")


class ConnectionSettingsError(ValueError):
    """The connection settings cannot be turned into a client configuration; the message is one line."""


def kafka_ssl_context(settings: Settings) -> ssl.SSLContext:
    """The TLS context of an SSL or SASL_SSL connection: the given CA (else the system's), the client certificate if any."""
    return tls.kafka_ssl_context(settings.kafka_ssl_cafile, settings.kafka_ssl_certfile, settings.kafka_ssl_keyfile)


def _sasl_password(settings: Settings) -> str | None:
    return settings.kafka_sasl_password.get_secret_value() if settings.kafka_sasl_password else None


def kafka_security(settings: Settings) -> dict[str, Any]:
    """aiokafka keyword arguments for the configured security protocol (no bootstrap servers)."""
    protocol = settings.kafka_security_protocol
    options: dict[str, Any] = {"security_protocol": protocol}
    if protocol in TLS_PROTOCOLS:
        options["ssl_context"] = kafka_ssl_context(settings)
    if protocol in SASL_PROTOCOLS:
        options["sasl_mechanism"] = settings.kafka_sasl_mechanism
        options["sasl_plain_username"] = settings.kafka_sasl_username
        options["sasl_plain_password"] = _sasl_password(settings)  # SCRAM reads the same two options
    return options


async def kafka_refusal(settings: Settings, timeout: float = 10.0) -> BaseException | None:
    """Why a bootstrap server refuses our SASL login or our trust in its certificate, else None (down, unreachable, fine).

    aiokafka's bootstrap reports every failure as "Unable to bootstrap" and only logs the cause, so one connection
    of our own per server (TLS handshake, SASL login, no request) recovers it: such a refusal is not transient.
    """
    from aiokafka.conn import create_conn
    from aiokafka.errors import AuthenticationFailedError, KafkaError, SaslAuthenticationFailed, UnsupportedSaslMechanismError

    for server in settings.bootstrap_servers:
        host, _, port = server.rpartition(":")
        try:
            connection = await asyncio.wait_for(
                create_conn(host.strip("[]"), int(port), request_timeout_ms=int(timeout * 1000), **kafka_security(settings)),
                timeout,
            )
        except (SaslAuthenticationFailed, AuthenticationFailedError, UnsupportedSaslMechanismError,
                ssl.SSLCertVerificationError) as error:
            return error
        except (OSError, KafkaError, asyncio.TimeoutError):
            continue
        connection.close()
    return None


def kafka_refusal_reason(error: BaseException) -> str:
    """A refusal from `kafka_refusal` in one line, naming the settings to check."""
    name, text = type(error).__name__, str(error).strip()
    first = (text if name in text else f"{name}: {text}").splitlines()[0]
    if isinstance(error, ssl.SSLError):
        return f"{first} (check TURNSTREAM_KAFKA_SSL_CAFILE)"
    return f"{first} (check TURNSTREAM_KAFKA_SASL_MECHANISM, TURNSTREAM_KAFKA_SASL_USERNAME and TURNSTREAM_KAFKA_SASL_PASSWORD)"


def kafka_options(settings: Settings) -> dict[str, Any]:
    """aiokafka keyword arguments shared by every client turnstream opens: bootstrap servers and security."""
    return {"bootstrap_servers": settings.bootstrap_servers, **kafka_security(settings)}


def faust_credentials(settings: Settings) -> CredentialsT | None:
    """Faust's `broker_credentials` for the same protocol (None for PLAINTEXT)."""
    import faust

    protocol = settings.kafka_security_protocol
    if protocol == "PLAINTEXT":
        return None
    if protocol == "SSL":
        return faust.SSLCredentials(kafka_ssl_context(settings))
    return faust.SASLCredentials(
        username=settings.kafka_sasl_username,
        password=_sasl_password(settings),
        mechanism=settings.kafka_sasl_mechanism,
        # Faust derives SASL_SSL from the presence of a context, SASL_PLAINTEXT from its absence
        ssl_context=kafka_ssl_context(settings) if protocol == "SASL_SSL" else None,
    )


def redis_client(settings: Settings, **options: Any) -> Redis:
    """An asyncio client on settings.redis_url (a RedisCluster with TURNSTREAM_REDIS_CLUSTER, Sentinel's primary
    with TURNSTREAM_REDIS_SENTINEL_MASTER), with TURNSTREAM_REDIS_PASSWORD unless the URL has one."""
    from redis.asyncio import Redis, RedisCluster
    from redis.asyncio.sentinel import Sentinel

    client: Redis = _topology_client(settings, options, Redis, RedisCluster, Sentinel)
    return client


def sync_redis_client(settings: Settings, **options: Any) -> SyncRedis:
    """The same as redis_client, for threads: a redis.Redis or redis.RedisCluster (the synchronous ContextClient's)."""
    from redis import Redis as SyncRedis, RedisCluster
    from redis.sentinel import Sentinel

    client: SyncRedis = _topology_client(settings, options, SyncRedis, RedisCluster, Sentinel)
    return client


def _topology_client(settings: Settings, options: dict[str, Any], plain: Any, cluster: Any, sentinel: Any) -> Any:
    """The client of the configured topology, from the classes of one redis-py flavour (asyncio or threads).

    The cluster client offers the commands, scripts and pipelines turnstream uses under the same names.
    """
    url, options = _redis_url_and_options(settings, options)
    if settings.redis_sentinel_master:
        sentinels, options = sentinel_options(url, options)
        return sentinel(sentinels).master_for(settings.redis_sentinel_master, **options)
    if settings.redis_cluster:
        return cluster.from_url(url, **options)
    return plain.from_url(url, **options)


def sentinel_options(url: str, options: dict[str, Any]) -> tuple[list[tuple[str, int]], dict[str, Any]]:
    """The sentinels a URL lists (`redis://[:password@]s1:26379,s2:26379/db`) and the options of the primary's
    connections: the URL's password, db and query, TLS for rediss://. The sentinels themselves are asked
    without password or TLS (redis-py's default)."""
    from redis.connection import parse_url

    found = _SENTINEL_URL.match(url)
    if found is None:
        raise ConnectionSettingsError("bad Sentinel URL: use redis://sentinel1:26379,sentinel2:26379/0")
    sentinels = []
    for host in found["hosts"].split(","):
        name, _, port = host.strip().rpartition(":")
        if not name or not port.isdigit():
            raise ConnectionSettingsError(f"bad sentinel address {host!r}: use host:port")
        sentinels.append((name, int(port)))
    user = f"{found['user']}@" if found["user"] is not None else ""
    parsed = parse_url(f"{found['scheme']}://{user}{sentinels[0][0]}:{sentinels[0][1]}{found['tail']}")
    for routed in ("host", "port", "connection_class"):  # the pool asks Sentinel where the primary is
        parsed.pop(routed, None)
    if found["scheme"] == "rediss":
        parsed["ssl"] = True
    return sentinels, {**options, **parsed}  # as from_url: what the URL says wins


def _redis_url_and_options(settings: Settings, options: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    if not settings.redis_url:
        raise ValueError("no Redis configured (TURNSTREAM_REDIS_URL)")
    if settings.redis_password is not None:
        # redis-py lets a password inside the URL take precedence over this one
        options.setdefault("password", settings.redis_password.get_secret_value())
    if settings.redis_ca_file is not None:
        # rediss:// alone turns TLS on and verifies against the system CAs
        options.setdefault("ssl_ca_certs", str(settings.redis_ca_file))
    return settings.redis_url, options
