"""The scope a request's Authorization header gives, and the routes the app is bound from."""

from __future__ import annotations

from turnstream.serve import handlers
from turnstream.serve.app import PUBLIC, scope_of
from turnstream.serve.routes import ROUTES
from turnstream.serve.scope import Scope
from turnstream.serve.tenants import TokenTable

TOKEN = "acme-token-0123456789"
TABLE = TokenTable.of([(TOKEN, "acme")])


def test_a_valid_bearer_token_gives_its_tenant_and_anything_else_no_scope() -> None:
    assert scope_of(TABLE, f"Bearer {TOKEN}") == Scope("acme")
    for header in ("", "Bearer", f"Bearer {TOKEN}x", f"Basic {TOKEN}", TOKEN):
        assert scope_of(TABLE, header) is None


def test_an_open_api_acts_without_a_tenant_whatever_the_header() -> None:
    assert scope_of(None, "") == Scope(None) == scope_of(None, f"Bearer {TOKEN}")


def test_every_route_has_its_handler_and_only_probes_metrics_and_the_document_are_public() -> None:
    assert all(callable(getattr(handlers, route.operation, None)) for route in ROUTES)
    assert PUBLIC == {"/v1/openapi.json", "/livez", "/readyz", "/metrics"}
    assert len({(route.method, route.path) for route in ROUTES}) == len(ROUTES)
