"""Every exception class turnstream defines derives from TurnstreamError, so `except TurnstreamError` catches
anything turnstream raises on purpose; each keeps its builtin base for the callers that catch that."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from functools import cache

import pytest

import turnstream
from turnstream.errors import TurnstreamError

pytestmark = pytest.mark.unit

NOT_IMPORTED = {"turnstream.__main__"}
"""Modules that run something when imported: `python -m turnstream` is the CLI."""


@cache
def defined_exceptions() -> dict[str, type[BaseException]]:
    """Every exception class a turnstream module defines, by its qualified name; every module imported."""
    found: dict[str, type[BaseException]] = {}
    for module in pkgutil.walk_packages(turnstream.__path__, "turnstream."):
        if module.name in NOT_IMPORTED:
            continue
        for value in vars(importlib.import_module(module.name)).values():
            if (
                inspect.isclass(value)
                and issubclass(value, BaseException)
                and value.__module__.startswith("turnstream.")
            ):
                found[f"{value.__module__}.{value.__qualname__}"] = value
    return found


def test_every_exception_turnstream_defines_derives_from_turnstream_error() -> None:
    found = defined_exceptions()
    assert {
        "turnstream.schemas.turn.TurnError",
        "turnstream.client.errors.RecordTimeout",
        "turnstream.stack.services.StackError",
    } <= set(found)  # the walk sees them
    assert sorted(name for name, error in found.items() if not issubclass(error, TurnstreamError)) == []


@pytest.mark.parametrize(
    ("name", "builtin"),
    [
        ("turnstream.schemas.turn.TurnError", ValueError),
        ("turnstream.client.errors.RecordTimeout", TimeoutError),
        ("turnstream.serve.run.ListenError", OSError),
        ("turnstream.serve.errors.NotFound", LookupError),
    ],
)
def test_an_error_keeps_its_builtin_base(name: str, builtin: type[BaseException]) -> None:
    assert issubclass(defined_exceptions()[name], builtin)
