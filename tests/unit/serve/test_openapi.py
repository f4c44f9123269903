"""The OpenAPI document: every route, every status, bodies from the SDK's models, a valid 3.1 document."""

from __future__ import annotations

import jsonschema
import pytest

from turnstream.prompt.assemble import Prompt
from turnstream.schemas.context import ContextDoc
from turnstream.serve.openapi import openapi_document
from turnstream.serve.routes import COMMON_ERRORS, ROUTES, UNKNOWN

DOC = openapi_document()


def validate(schema: dict, value: object) -> None:
    """Validate against a schema of the document, its $refs resolved within it."""
    root = {"components": DOC["components"], **schema}
    jsonschema.Draft202012Validator(root).validate(value)


@pytest.mark.parametrize("route", ROUTES, ids=lambda r: r.operation)
def test_every_route_is_documented_with_each_of_its_statuses(route) -> None:
    operation = DOC["paths"][route.path][route.method.lower()]
    statuses = {int(s) for s in operation["responses"]}
    assert set(route.replies) <= statuses
    if not route.public:
        assert {*COMMON_ERRORS, *route.errors} <= statuses and "security" not in operation
    else:
        assert operation["security"] == []
    assert ("requestBody" in operation) == (route.request is not None)


def test_bodies_are_the_sdks_own_models() -> None:
    paths = DOC["paths"]
    assert paths["/v1/sessions/{session_id}/context"]["get"]["responses"]["200"]["content"]["application/json"][
        "schema"
    ] == {"$ref": "#/components/schemas/ContextDoc"}
    schemas = DOC["components"]["schemas"]
    assert set(ContextDoc.model_fields) <= set(schemas["ContextDoc"]["properties"])
    assert set(Prompt.__dataclass_fields__) == set(schemas["Prompt"]["properties"])
    assert schemas["Turn"]["properties"]["session_id"]["pattern"] == "^[A-Za-z0-9._:-]+$"


def test_a_real_context_document_and_a_broken_one_against_the_published_schema() -> None:
    schema = DOC["paths"]["/v1/sessions/{session_id}/context"]["get"]["responses"]["200"]["content"][
        "application/json"
    ]["schema"]
    doc = {
        "session_id": "s1",
        "tenant": "acme",
        "version": 3,
        "last_turn_id": "t3",
        "updated_at": 1.0,
        "messages": [{"role": "user", "content": "hi"}],
        "tokens": {"before": 1, "after": 1, "budget": 10},
    }
    validate(schema, ContextDoc.model_validate(doc).model_dump(mode="json"))
    with pytest.raises(jsonschema.ValidationError):
        validate(schema, {**doc, "version": -1})


def test_the_document_is_openapi_3_1_with_a_bearer_scheme() -> None:
    assert DOC["openapi"] == "3.1.0"
    assert DOC["components"]["securitySchemes"]["bearer"] == {"type": "http", "scheme": "bearer"}
    assert DOC["security"] == [{"bearer": []}]
    refs = {v for v in _refs(DOC)}
    assert refs and all(ref.removeprefix("#/components/schemas/") in DOC["components"]["schemas"] for ref in refs)


def _refs(node: object):
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "$ref":
                yield value
            else:
                yield from _refs(value)
    elif isinstance(node, list):
        for item in node:
            yield from _refs(item)


@pytest.mark.parametrize("route", [r for r in ROUTES if not r.public], ids=lambda r: r.operation)
def test_an_unknown_id_has_one_answer_per_route_and_the_document_says_which(route) -> None:
    """A read of what there is (prompt, search) answers 200 for an id with nothing behind it, and a read or an erasure
    of one thing (context, erase) 404: the description says so, and the statuses listed agree with it."""
    operation = DOC["paths"][route.path][route.method.lower()]
    if route.operation == "record":
        assert "404" in operation["responses"] and "`session_id` must be the path's" in operation["description"]
        return
    status = 404 if route.method == "DELETE" or route.operation == "context" else 200
    assert operation["description"].startswith(UNKNOWN + f"is {status}")
    assert ("404" in operation["responses"]) == (status == 404)
