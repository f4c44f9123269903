"""Kafka connection options from the settings, in one place: every Kafka client is built from these (the Redis
clients are built in redis/connect.py).

`kafka_options` feeds aiokafka (TurnProducer, the admin client, start-up checks); `faust_credentials`
feeds Faust's `broker_credentials`, which Faust turns into the same aiokafka options for its consumer,
producer and topic creation.
"""

from __future__ import annotations

import asyncio
import ssl
from typing import TYPE_CHECKING, Any

from turnstream import tls
from turnstream.errors import TurnstreamError
from turnstream.settings import SASL_PROTOCOLS, TLS_PROTOCOLS, KafkaSettings

if TYPE_CHECKING:
    from faust.types.auth import CredentialsT


class ConnectionSettingsError(TurnstreamError, ValueError):
    """The connection settings cannot be turned into a client configuration; the message is one line."""


def kafka_ssl_context(settings: KafkaSettings) -> ssl.SSLContext:
    """The TLS context of an SSL or SASL_SSL connection: the given CA (else the system's), the client certificate if any."""
    return tls.kafka_ssl_context(settings.kafka_ssl_cafile, settings.kafka_ssl_certfile, settings.kafka_ssl_keyfile)


def _sasl_password(settings: KafkaSettings) -> str | None:
    return settings.kafka_sasl_password.get_secret_value() if settings.kafka_sasl_password else None


def kafka_security(settings: KafkaSettings) -> dict[str, Any]:
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


async def kafka_refusal(settings: KafkaSettings, timeout: float = 10.0) -> BaseException | None:
    """Why a bootstrap server refuses our SASL login or our trust in its certificate, else None (down, unreachable, fine).

    aiokafka's bootstrap reports every failure as "Unable to bootstrap" and only logs the cause, so one connection
    of our own per server (TLS handshake, SASL login, no request) recovers it: such a refusal is not transient.
    """
    from aiokafka.conn import create_conn
    from aiokafka.errors import (
        AuthenticationFailedError,
        KafkaError,
        SaslAuthenticationFailed,
        UnsupportedSaslMechanismError,
    )

    for server in settings.bootstrap_servers:
        host, _, port = server.rpartition(":")
        try:
            connection = await asyncio.wait_for(
                create_conn(
                    host.strip("[]"), int(port), request_timeout_ms=int(timeout * 1000), **kafka_security(settings)
                ),
                timeout,
            )
        except (
            SaslAuthenticationFailed,
            AuthenticationFailedError,
            UnsupportedSaslMechanismError,
            ssl.SSLCertVerificationError,
        ) as error:
            return error
        except (TimeoutError, OSError, KafkaError):
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


def kafka_options(settings: KafkaSettings) -> dict[str, Any]:
    """aiokafka keyword arguments shared by every client turnstream opens: bootstrap servers and security."""
    return {"bootstrap_servers": settings.bootstrap_servers, **kafka_security(settings)}


def faust_credentials(settings: KafkaSettings) -> CredentialsT | None:
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
