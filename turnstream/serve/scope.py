"""What a request may touch: one tenant's sessions and users, decided before any I/O.

The tenant comes from the token, never from the request: every session key and owner key the API builds
is the token tenant's (schemas/ids.py escapes each part, so no id of one tenant spells a key of another).
A request that names another tenant (a turn whose `tenant` differs) is answered exactly as a session that
does not exist: 404 with the same body, so a token learns nothing about other tenants.
"""

from __future__ import annotations

from dataclasses import dataclass

from turnstream.errors import TurnstreamError
from turnstream.schemas.ids import session_key, session_owner, user_owner


@dataclass(frozen=True, slots=True)
class Scope:
    """The tenant a request acts for; None only on an API started open (loopback, no tokens)."""

    tenant: str | None


class OutOfScope(TurnstreamError, LookupError):
    """The request names something outside its tenant: answered as not found."""


class NoOwner(TurnstreamError, ValueError):
    """A search or a note that names neither a user nor a session: the request is malformed."""


class BadTurns(TurnstreamError, ValueError):
    """The turns of a record request cannot be scoped: `field` (a pydantic-style path) says which."""

    def __init__(self, field: str, detail: str) -> None:
        super().__init__(f"{field}: {detail}")
        self.field = field
        self.detail = detail


def scoped_turns(turns: object, session_id: str, scope: Scope) -> object:
    """The turns of a record request for the path's `session_id`, each with the scope's tenant.

    A turn without `tenant` gets the scope's; one naming another tenant is OutOfScope, one naming another
    session than the path a BadTurns (the request is malformed). A turn keeps its own `session_id`, as the
    Turn schema requires it. Values that are not JSON objects, and a missing session_id, are left for the
    model to refuse with its own error."""
    if not isinstance(turns, list):
        return turns
    scoped = []
    for index, turn in enumerate(turns):
        if isinstance(turn, dict):
            if turn.get("tenant") is not None and turn["tenant"] != scope.tenant:
                raise OutOfScope(session_id)
            if turn.get("session_id", session_id) != session_id:
                raise BadTurns(f"turns.{index}.session_id", "must be the session of the path")
            if scope.tenant is not None:
                turn = {**turn, "tenant": scope.tenant}
        scoped.append(turn)
    return scoped


def nothing_to_erase(counts: dict[str, int]) -> bool:
    """Whether an erasure's dry run found nothing of the session or user: the Table-row count is what the erasure
    would ask the workers to drop, not what exists, so it is left out."""
    return not any(count for kind, count in counts.items() if kind != "sessions (Table rows)")


def owner_for(scope: Scope, user_id: str | None, session_id: str | None) -> str:
    """The memory owner a search or a note names: the scope tenant's user, else the session's own owner (a session
    without a user keeps its memories apart from every user's)."""
    if user_id:
        return user_owner(user_id, scope.tenant)
    if session_id:
        return session_owner(session_key(session_id, scope.tenant))
    raise NoOwner("give user_id or session_id")
