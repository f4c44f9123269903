"""The contracts other programs rely on: Turn (input topic), ContextDoc (Redis, client), their JSON Schema.

The package is the ground floor: it imports only turnstream.text. Its names are loaded when first asked for,
so the rules beneath pydantic (compaction/ uses schemas.token_counts and schemas.message, plain Python) load no
pydantic when they import one module of it.
"""

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from turnstream.schemas.context import ContextDoc, ContextFact
    from turnstream.schemas.export import RECORDS, json_schema
    from turnstream.schemas.ids import session_key
    from turnstream.schemas.token_counts import TokenCounts
    from turnstream.schemas.turn import Turn, TurnError, decode_turn, encode_turn, validate_turn

_WHERE = {
    "ContextDoc": "context",
    "ContextFact": "context",
    "RECORDS": "export",
    "json_schema": "export",
    "session_key": "ids",
    "TokenCounts": "token_counts",
    "Turn": "turn",
    "TurnError": "turn",
    "decode_turn": "turn",
    "encode_turn": "turn",
    "validate_turn": "turn",
}


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{_WHERE[name]}"), name)


__all__ = [
    "ContextDoc",
    "ContextFact",
    "RECORDS",
    "TokenCounts",
    "Turn",
    "TurnError",
    "decode_turn",
    "encode_turn",
    "json_schema",
    "session_key",
    "validate_turn",
]
