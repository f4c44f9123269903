"""The OpenAPI 3.1 document of the API, made from routes.py and the pydantic schemas of its bodies (pure).

Bodies are the SDK's own records (Turn, ContextDoc, Prompt, ...), so the document says what the Python
client returns; requests are documented as they are validated, replies as they are serialized.
"""

from __future__ import annotations

from typing import Any

from pydantic import TypeAdapter

from turnstream import __version__
from turnstream.serve.routes import COMMON_ERRORS, ERROR_REPLY, ROUTES, Route

REF = "#/components/schemas/{model}"
_REASONS = {
    200: "OK",
    202: "Accepted: the wait ran out before the context included the last turn",
    401: "No valid bearer token",
    404: "No such session or user (for this token's tenant)",
    413: "Request body too large",
    422: "Invalid request: `field` names the culprit",
    500: "Internal error",
    503: "The broker or Redis is unavailable: retry after Retry-After seconds",
}


def _schemas() -> tuple[dict[tuple[Any, str], dict[str, Any]], dict[str, Any]]:
    """Each body type's schema (a $ref for models) per mode, and the components they refer to."""
    inputs: list[tuple[tuple[Any, str], Any, TypeAdapter[Any]]] = []
    for route in ROUTES:
        if route.request is not None:
            inputs.append(((route.request, "validation"), "validation", TypeAdapter(route.request)))
        for body in (*route.replies.values(), ERROR_REPLY):
            if body not in (dict, str):
                inputs.append(((body, "serialization"), "serialization", TypeAdapter(body)))
    unique = list({key: (key, mode, adapter) for key, mode, adapter in inputs}.values())
    refs, defs = TypeAdapter.json_schemas(unique, ref_template=REF)
    return {key: schema for (key, _), schema in refs.items()}, defs.get("$defs", {})


def _json(schema: dict[str, Any]) -> dict[str, Any]:
    return {"application/json": {"schema": schema}}


def _operation(route: Route, refs: dict[tuple[Any, str], dict[str, Any]]) -> dict[str, Any]:
    responses: dict[str, Any] = {}
    for status, body in route.replies.items():
        if body is str:
            content = {"text/plain": {"schema": {"type": "string"}}}
        else:
            content = _json({"type": "object"} if body is dict else refs[body, "serialization"])
        responses[str(status)] = {"description": _REASONS.get(status, "OK"), "content": content}
    errors = () if route.public else (*route.errors, *COMMON_ERRORS)
    for status in sorted(set(errors)):
        responses[str(status)] = {"description": _REASONS[status], "content": _json(refs[ERROR_REPLY, "serialization"])}
    operation: dict[str, Any] = {"operationId": route.operation, "summary": route.summary, "responses": responses}
    if route.description:
        operation["description"] = route.description
    if route.params:
        operation["parameters"] = [
            {"name": p.name, "in": p.where, "required": p.required, "schema": p.schema, "description": p.description}
            for p in route.params
        ]
    if route.request is not None:
        operation["requestBody"] = {"required": True, "content": _json(refs[route.request, "validation"])}
    if route.public:
        operation["security"] = []
    return operation


def openapi_document() -> dict[str, Any]:
    """The whole document, as served at /v1/openapi.json."""
    refs, components = _schemas()
    paths: dict[str, dict[str, Any]] = {}
    for route in ROUTES:
        paths.setdefault(route.path, {})[route.method.lower()] = _operation(route, refs)
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "turnstream",
            "version": __version__,
            "description": "Record turns, read compacted contexts and prompts, search and erase memory; "
            "each bearer token acts for one tenant.",
        },
        "jsonSchemaDialect": "https://json-schema.org/draft/2020-12/schema",
        "paths": paths,
        "components": {"schemas": components, "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}}},
        "security": [{"bearer": []}],
    }
