"""The gateway SDK's own errors; a gateway catches ClientError for all of them."""

from __future__ import annotations

from turnstream.errors import TurnstreamError


class ClientError(TurnstreamError):
    """Base of the errors turnstream.client raises itself (broker and Redis errors pass through as they are)."""


class ProducerStartError(ClientError):
    """The producer could not connect to the broker."""


class ShadowSettingsError(ClientError, ValueError):
    """A producer made with a shadow's settings (TURNSTREAM_TURNS_FROM): it would write into the live turns topic."""


class ProducerClosedError(ClientError):
    """A send on a producer that is closed."""


class ProducerBufferFull(ClientError):
    """No room freed for a turn within the producer's send_timeout: the broker is down or slower than the sends."""


class RecordTimeout(ClientError, TimeoutError):
    """A recorded turn was not acknowledged, or not in the session's context, in time."""

    def __init__(self, session_key: str, turn_id: str, timeout: float, missing: str) -> None:
        super().__init__(f"session {session_key!r}: turn {turn_id!r} not {missing} within {timeout:g} s")
        self.session_key = session_key
        self.turn_id = turn_id
