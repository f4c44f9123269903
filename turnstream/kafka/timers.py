"""Faust's `app.timer` with a type: Faust declares the decorator untyped, which would leave every timer it
registers untyped too."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from faust.types import AppT

Timer = Callable[[], Awaitable[None]]
"""A timer's body: an async function of no arguments."""


def timer(app: AppT, interval: float, name: str | None = None) -> Callable[[Timer], Timer]:
    """`@app.timer(interval, name=name)`: the decorated function runs every `interval` seconds, on every worker."""
    register: Callable[[Timer], Timer] = app.timer(interval, name=name)
    return register
