"""The records: Turn (input topic), ContextDoc (Redis, client); their JSON Schema export."""

from turnstream.compaction.compactor import TokenCounts
from turnstream.schemas.context import ContextDoc, ContextFact
from turnstream.schemas.export import RECORDS, json_schema
from turnstream.schemas.keys import session_key
from turnstream.schemas.turn import Turn, TurnError, decode_turn, encode_turn, validate_turn

__all__ = [
    "RECORDS",
    "ContextDoc",
    "ContextFact",
    "TokenCounts",
    "Turn",
    "TurnError",
    "decode_turn",
    "encode_turn",
    "json_schema",
    "session_key",
    "validate_turn",
]
