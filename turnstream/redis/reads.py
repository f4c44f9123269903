"""The gateway's reads as data: the commands of one round trip and how their replies decode.

The asyncio executor (redis/aio.py) and the blocking one (redis/blocking.py) run the same `Read`, so the
SDK's two clients send the same commands to the same keys and decode the same way; they differ in their
awaits only.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any, Generic, TypeVar

from turnstream.redis.keys import KeyLayout
from turnstream.redis.scripts import Call, ScriptSpec
from turnstream.schemas.context import ContextDoc
from turnstream.schemas.ids import session_owner

T = TypeVar("T")
Command = tuple[str | bytes | int | float, ...]
"""One Redis command and its arguments, as redis-py's `execute_command` takes them."""


@dataclass(frozen=True, slots=True)
class ScriptCommand:
    """One call of a shipped Lua script: sent as EVALSHA (EVAL on a cluster pipeline), loaded on NOSCRIPT."""

    spec: ScriptSpec
    call: Call

    def evalsha(self) -> Command:
        return ("EVALSHA", script_sha(self.spec), len(self.call.keys), *self.call.keys, *self.call.args)

    def eval(self) -> Command:
        return ("EVAL", self.spec.text(), len(self.call.keys), *self.call.keys, *self.call.args)


@dataclass(frozen=True, slots=True)
class Read(Generic[T]):
    """The commands of one round trip (pipelined when more than one) and the decoder of their replies."""

    commands: tuple[Command | ScriptCommand, ...]
    decode: Callable[[list[Any]], T]


@cache
def script_sha(spec: ScriptSpec) -> str:
    """The SHA1 Redis names a script by."""
    return hashlib.sha1(spec.text().encode()).hexdigest()


def reply_text(reply: bytes | str) -> str:
    """A reply as text: redis-py types replies as bytes or str, and turnstream's clients, which do not decode, get
    bytes."""
    return reply.decode() if isinstance(reply, bytes) else reply


def owner_from(stored: bytes | str | None, session_key: str) -> str:
    """The owner pointer's value; a session the worker has not written yet is its own owner."""
    if stored is None:
        return session_owner(session_key)
    return stored.decode() if isinstance(stored, bytes) else stored


def doc_from(stored: bytes | str | None) -> ContextDoc | None:
    """The context hash's `doc` field as a ContextDoc; None when the session has no context."""
    return None if stored is None else ContextDoc.from_json(stored)


def owner_read(layout: KeyLayout, session_key: str) -> Read[str]:
    """The session's owner as the worker last wrote it; the session itself when it has none yet."""
    return Read((("GET", layout.owner_pointer(session_key)),), lambda replies: owner_from(replies[0], session_key))


def context_read(layout: KeyLayout, session_key: str, owner: str) -> Read[ContextDoc | None]:
    """The stored context of a session."""
    return Read((("HGET", layout.session(owner, session_key).context, "doc"),), lambda replies: doc_from(replies[0]))


def including_read(
    layout: KeyLayout, session_key: str, owner: str, turn_id: str
) -> Read[tuple[ContextDoc | None, bool]]:
    """The stored context and whether it includes `turn_id`."""
    keys = layout.session(owner, session_key)
    return Read(
        (("HGET", keys.context, "doc"), ("ZSCORE", keys.applied, turn_id)),
        lambda replies: (doc_from(replies[0]), replies[1] is not None),
    )


def forgotten_read(layout: KeyLayout, session_key: str) -> Read[bool]:
    """Whether the session was erased (its forget marker is set)."""
    return Read((("EXISTS", layout.forgotten(session_key)),), lambda replies: bool(replies[0]))


def script_read(spec: ScriptSpec, call: Call, decode: Callable[[Sequence[Any]], T]) -> Read[T]:
    """One script call as a read, its reply decoded by `decode`."""
    return Read((ScriptCommand(spec, call),), lambda replies: decode(replies[0]))


def as_command(command: Command | ScriptCommand, cluster: bool) -> Command:
    """The arguments to send: a script as EVALSHA, or as EVAL in a cluster pipeline (which refuses EVALSHA: it
    cannot load a missing script half-way); redis-py sends it to the node of its keys' slot."""
    if isinstance(command, ScriptCommand):
        return command.eval() if cluster else command.evalsha()
    return command


def scripts_of(commands: Sequence[Command | ScriptCommand]) -> list[ScriptSpec]:
    """The scripts a read calls: what to load when Redis answers NOSCRIPT."""
    return list(dict.fromkeys(command.spec for command in commands if isinstance(command, ScriptCommand)))
