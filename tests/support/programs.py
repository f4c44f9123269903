"""Programs a test runs from PATH (node, npm, java): found, or the test fails saying what is missing."""

from __future__ import annotations

import shutil

import pytest


def tool(name: str, why: str) -> str:
    """The path of `name`, or a failed test saying what is missing (CI has them all: never a skip)."""
    found = shutil.which(name)
    if found is None:
        pytest.fail(f"`{name}` is not on PATH: {why}", pytrace=False)
    return found
