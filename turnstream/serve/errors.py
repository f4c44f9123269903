"""How a failure becomes a reply (pure): which status, which body, which headers.

Rules: a request the client got wrong is 4xx naming what is wrong (422 names the field by pydantic's location);
a session or user of another tenant is the same 404 as one that does not exist; a broker or Redis that does not
answer is 503 with Retry-After, and a record says whether the broker acknowledged its turns; anything else is
500 with no detail (the log has it).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from aiokafka.errors import KafkaError
from pydantic import ValidationError

from turnstream.client.errors import ProducerBufferFull, ProducerClosedError, ProducerStartError, RecordTimeout
from turnstream.errors import TurnstreamError
from turnstream.operations.erasure import ErasureNotConfirmed
from turnstream.redis.errors import REDIS_UNAVAILABLE
from turnstream.serve.models import ErrorReply
from turnstream.serve.scope import BadTurns, NoOwner, OutOfScope

RETRY_AFTER_SECONDS = 2
"""What a 503 asks a client to wait: a broker or Redis restart takes seconds, a failover a little more."""
NOT_FOUND = ErrorReply(error="not_found", detail="no such session or user")
"""One body for every 404: an id of another tenant reads exactly as one that does not exist."""


class InvalidRequest(TurnstreamError, ValueError):
    """A request body or parameter that does not validate."""

    def __init__(self, field: str | None, detail: str) -> None:
        super().__init__(f"{field}: {detail}" if field else detail)
        self.field = field
        self.detail = detail

    @classmethod
    def of(cls, error: ValidationError, prefix: Sequence[str | int] = ()) -> InvalidRequest:
        """The first problem pydantic found, with its location dotted (`turns.0.message`)."""
        first = error.errors()[0]
        loc = [*prefix, *first["loc"]]
        return cls(".".join(str(part) for part in loc) or None, first["msg"].removeprefix("Value error, "))


class NotFound(TurnstreamError, LookupError):
    """No such session or user for the request's tenant."""


class BrokerNotReady(TurnstreamError, RuntimeError):
    """The API's producer has not connected to the broker (yet, or again)."""


@dataclass(frozen=True, slots=True)
class Failure:
    status: int
    body: ErrorReply
    headers: dict[str, str] = field(default_factory=dict)


_BROKER = (KafkaError, ProducerStartError, ProducerBufferFull, ProducerClosedError, RecordTimeout, BrokerNotReady)
_REDIS = REDIS_UNAVAILABLE


def failure_of(error: BaseException, recording: bool = False) -> Failure:
    """The reply to `error`; `recording`: it ended a record request (whose broker phase comes before any Redis
    read, so a Redis failure there means every turn was acknowledged)."""
    retry = {"Retry-After": str(RETRY_AFTER_SECONDS)}
    if isinstance(error, InvalidRequest):
        return Failure(422, ErrorReply(error="invalid_request", detail=error.detail, field=error.field))
    if isinstance(error, BadTurns):
        return Failure(422, ErrorReply(error="invalid_request", detail=error.detail, field=error.field))
    if isinstance(error, NoOwner):
        return Failure(422, ErrorReply(error="invalid_request", detail=str(error)))
    if isinstance(error, (NotFound, OutOfScope)):
        return Failure(404, NOT_FOUND)
    if isinstance(error, _BROKER):
        detail = (
            "the broker did not acknowledge the turns in time"
            if isinstance(error, RecordTimeout)
            else f"the broker is unavailable ({type(error).__name__})"
        )
        return Failure(
            503, ErrorReply(error="unavailable", detail=detail, acknowledged=False if recording else None), retry
        )
    if isinstance(error, _REDIS):
        return Failure(
            503,
            ErrorReply(error="unavailable", detail="Redis is unavailable", acknowledged=True if recording else None),
            retry,
        )
    if isinstance(error, ErasureNotConfirmed):
        return Failure(503, ErrorReply(error="unavailable", detail=str(error)), retry)
    return Failure(500, ErrorReply(error="internal", detail="internal error; the server's log has the details"))


def reply_body(reply: ErrorReply) -> dict[str, Any]:
    """The JSON of an error reply, unset optional fields left out."""
    return reply.model_dump(exclude_none=True)
