"""The tests mirror the package tree: within a tier, a test file sits in the folder of the package it tests
(turnstream's, or turnstream_tools' under `tools/`); tests/unit/docs checks the docs/ pages."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]
MIRRORED = {"tools": ROOT / "tools" / "turnstream_tools", "docs": ROOT / "docs"}
"""Test folders whose counterpart is not in turnstream/: the tools' package and the documentation."""

pytestmark = pytest.mark.unit


def counterpart(relative: Path) -> Path:
    head, *rest = relative.parts
    base = MIRRORED.get(head)
    return base.joinpath(*rest) if base is not None else ROOT.joinpath("turnstream", *relative.parts)


@pytest.mark.parametrize("tier", ["unit", "integration"])
def test_every_test_folder_has_its_package(tier: str) -> None:
    top = ROOT / "tests" / tier
    folders = [path.parent.relative_to(top) for path in top.rglob("test_*.py") if path.parent != top]
    assert folders  # the walk sees them
    assert not sorted({str(folder) for folder in folders if not counterpart(folder).is_dir()})
