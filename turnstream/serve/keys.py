"""Typed keys of what the aiohttp app and each request carry."""

from __future__ import annotations

from aiohttp import web

from turnstream.serve.metrics import ServeMetrics
from turnstream.serve.scope import Scope
from turnstream.serve.service import Backend

BACKEND: web.AppKey[Backend] = web.AppKey("backend", Backend)
METRICS: web.AppKey[ServeMetrics] = web.AppKey("metrics", ServeMetrics)
OPENAPI: web.AppKey[bytes] = web.AppKey("openapi", bytes)
"""The OpenAPI document, serialized once."""
SCOPE: web.RequestKey[Scope] = web.RequestKey("scope", Scope)
