"""The root of every exception turnstream defines."""

from __future__ import annotations


class TurnstreamError(Exception):
    """What to catch to catch anything turnstream raises on purpose (each also keeps its builtin base, e.g. ValueError)."""
