"""The TLS context of a Kafka connection from its CA, certificate and key files.

A leaf beneath settings and connections: connections builds every client's context with it, and the Settings
validator builds one once, so unreadable PEM files fail at start-up in one line, not at the first connection.
"""

from __future__ import annotations

import ssl
from pathlib import Path

from turnstream.errors import TurnstreamError


class TlsFilesError(TurnstreamError, ValueError):
    """The TLS files cannot be loaded; the message is one line."""


def kafka_ssl_context(
    cafile: str | Path | None, certfile: str | Path | None, keyfile: str | Path | None
) -> ssl.SSLContext:
    """The given CA (else the system's) and the client certificate if any."""
    from aiokafka.helpers import create_ssl_context

    try:
        context: ssl.SSLContext = create_ssl_context(cafile=cafile, certfile=certfile, keyfile=keyfile)
        return context
    except (ssl.SSLError, OSError) as error:
        raise TlsFilesError(f"cannot load the Kafka TLS files: {error}") from None
