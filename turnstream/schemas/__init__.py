"""The contracts other programs rely on: Turn (input topic), ContextDoc (Redis, client), their JSON Schema.

The package is the ground floor: it imports only turnstream.text. Its face exports nothing, and each record is
imported from its module, so the rules beneath pydantic (compaction/ uses schemas.token_counts and
schemas.message, plain Python) load no pydantic: turn.py (Turn, TurnError, decode_turn, encode_turn,
validate_turn), context.py (ContextDoc, ContextFact), export.py (RECORDS, json_schema), ids.py (session_key and
the other identities keys are made of), token_counts.py (TokenCounts), memory.py, archive.py, journal.py,
control.py, summaries.py, headers.py and message.py.
"""

__all__: list[str] = []
