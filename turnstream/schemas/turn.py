"""The Turn record (value of the input topic) and its decoder, which names why a value is refused."""

from __future__ import annotations

from typing import Annotated, Any

import orjson
from pydantic import BaseModel, ConfigDict, Field, ValidationError, WithJsonSchema, field_validator

from turnstream.errors import TurnstreamError
from turnstream.schemas.ids import session_key
from turnstream.schemas.message import MESSAGE_SCHEMA, shape_error
from turnstream.text.chat import Message

SAFE_ID = r"^[A-Za-z0-9._:-]+$"
"""Characters allowed in a session id: they go into Kafka keys and Redis hash tags unescaped."""
SAFE_TENANT = r"^[A-Za-z0-9._-]+$"
# No ':' in a tenant, as before: the session key (schemas/ids.py) escapes one anyway, so this only
# keeps tenants to the characters gateways were told to use.

MessageField = Annotated[Message, WithJsonSchema(MESSAGE_SCHEMA)]
"""A `Message` in a record: checked by the decoder, published with MESSAGE_SCHEMA."""


class Turn(BaseModel):
    """One conversation turn as a gateway produces it."""

    model_config = ConfigDict(
        frozen=True,
        strict=True,  # JSON types only ("5" is not a seq), as the published JSON Schema says
        extra="ignore",  # a newer gateway's extra field must not send every turn to the DLQ
        use_attribute_docstrings=True,
        title="Turn",
    )

    turn_id: str = Field(min_length=1, max_length=128)
    """Idempotency key, unique within its session: a redelivered turn is applied once."""
    session_id: str = Field(min_length=1, max_length=128, pattern=SAFE_ID)
    """Conversation id; with the tenant it is the Kafka key, so one session stays in one partition."""
    tenant: str | None = Field(None, min_length=1, max_length=64, pattern=SAFE_TENANT)
    """Optional namespace of the session id (no ':')."""
    user_id: str | None = Field(None, min_length=1, max_length=128)
    """Owner of long-term memory."""
    seq: int | None = Field(None, ge=0)
    """Position of the turn in its session, from 0, when the gateway knows it: replays at or below the highest
    applied are dropped, and turns that reached the worker under a wrong Kafka key are put back in order by it."""
    ts: float | None = None
    """When the turn happened, epoch seconds."""
    message: MessageField
    """One OpenAI chat message: role, content, tool_calls, tool_call_id."""
    meta: dict[str, Any] = Field(default_factory=dict)
    """Free-form gateway metadata, carried along untouched."""

    @field_validator("message")
    @classmethod
    def _check_message(cls, message: dict[str, Any]) -> dict[str, Any]:
        if problem := shape_error(message):
            raise ValueError(problem)
        return message

    @property
    def session_key(self) -> str:
        """`tenant:session_id` with each part escaped (schemas/ids.py): the Kafka key and the Redis identity."""
        return session_key(self.session_id, self.tenant)


class TurnError(TurnstreamError, ValueError):
    """A value that is not a valid Turn: `reason` is a short code, `detail` says what is wrong."""

    def __init__(self, reason: str, detail: str, turn_id: str | None = None) -> None:
        super().__init__(f"{reason}: {detail}")
        self.reason = reason
        self.detail = detail
        self.turn_id = turn_id
        """The value's `turn_id` when it parsed to an object with a string one, for log lines."""


def _schema_error(error: ValidationError) -> TurnError:
    problems = error.errors()
    # An unsafe session id is reported as such whatever else is wrong: it is the one a gateway
    # must fix at its source, and it must never reach a Redis key.
    unsafe = [p for p in problems if p["loc"] == ("session_id",) and p["type"] == "string_pattern_mismatch"]
    if unsafe:
        return TurnError(
            "unsafe_session_id", f"session_id {unsafe[0]['input']!r} has characters outside [A-Za-z0-9._:-]"
        )
    first = problems[0]
    path = ".".join(str(part) for part in first["loc"]) or "turn"
    return TurnError("schema", f"{path}: {first['msg'].removeprefix('Value error, ')}")


def decode_turn(raw: bytes, max_bytes: int) -> Turn:
    """Parse and validate one input-topic value; raise TurnError naming the first problem."""
    if len(raw) > max_bytes:
        raise TurnError("oversize", f"{len(raw)} bytes, limit {max_bytes}")
    try:
        data = orjson.loads(raw)
    except orjson.JSONDecodeError as error:
        # orjson refuses bad UTF-8 too; telling it apart only on this failure path keeps the happy path one pass
        try:
            raw.decode("utf-8")
        except UnicodeDecodeError as bad:
            raise TurnError("invalid_utf8", f"byte {bad.start}: {bad.reason}") from None
        raise TurnError("not_json", str(error)) from None
    try:
        return validate_turn(data)
    except TurnError as error:
        turn_id = data.get("turn_id") if isinstance(data, dict) else None
        error.turn_id = turn_id if isinstance(turn_id, str) else None
        raise


def validate_turn(data: Any) -> Turn:
    """A Turn from already parsed JSON; raise TurnError ("schema" or "unsafe_session_id")."""
    if not isinstance(data, dict):
        raise TurnError("schema", f"turn: expected a JSON object, got {type(data).__name__}")
    try:
        return Turn.model_validate(data)
    except ValidationError as error:
        raise _schema_error(error) from None


def encode_turn(turn: Turn) -> bytes:
    """The turn as input-topic JSON: the fields the caller set, the message dict as given."""
    return orjson.dumps(turn.model_dump(exclude_unset=True))
