"""JSON Schema (draft 2020-12) of the records other programs produce or read."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from turnstream.schemas.context import ContextDoc
from turnstream.schemas.turn import Turn

DRAFT = "https://json-schema.org/draft/2020-12/schema"

_RECORDS: dict[str, tuple[type[BaseModel], str]] = {
    "turn": (
        Turn,
        "Value of the turns topic (UTF-8 JSON, keyed by its session key: tenant:session_id, each part with % : { } percent-escaped): one conversation turn.",
    ),
    "context": (
        ContextDoc,
        "A session's compacted context document, as stored in Redis and returned by ContextClient.",
    ),
}

RECORDS = tuple(_RECORDS)
"""Names accepted by json_schema()."""


def json_schema(name: str) -> dict[str, Any]:
    """The published schema of record `name` ("turn" or "context"), with $schema, $id, title, description."""
    model, description = _RECORDS[name]
    # mode="validation": what a producer must send (defaults may be omitted)
    body = model.model_json_schema(mode="validation")
    return {"$schema": DRAFT, "$id": f"urn:turnstream:schema:{name}:v1", **body, "description": description}
