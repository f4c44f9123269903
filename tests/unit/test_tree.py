"""The tests mirror the package tree: within a tier, a test file sits in the folder of the package it tests
(turnstream's, or turnstream_tools' under `tools/`); tests/unit/docs checks the docs/ pages."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]
MIRRORED = {
    # the tools are a second distribution: their tests mirror tools/turnstream_tools/, not turnstream/
    "tools": ROOT / "tools" / "turnstream_tools",
    # the docs pages are checked (links, examples, generated tables): their tests mirror docs/, not code
    "docs": ROOT / "docs",
}
"""Test folders whose counterpart is not in turnstream/. Helpers shared by the tiers live in tests/support/,
outside both tiers, so no helper folder needs an exception here."""

pytestmark = pytest.mark.unit


def counterpart(relative: Path) -> Path:
    head, *rest = relative.parts
    base = MIRRORED.get(head)
    return base.joinpath(*rest) if base is not None else ROOT.joinpath("turnstream", *relative.parts)


def folders_with_tests(tier: str) -> list[Path]:
    top = ROOT / "tests" / tier
    return sorted({path.parent.relative_to(top) for path in top.rglob("test_*.py") if path.parent != top})


@pytest.mark.parametrize("tier", ["unit", "integration"])
def test_every_test_folder_has_its_package(tier: str) -> None:
    folders = folders_with_tests(tier)
    assert folders  # the walk sees them
    assert not [str(folder) for folder in folders if not counterpart(folder).is_dir()]


@pytest.mark.parametrize("tier", ["unit", "integration"])
def test_every_test_folder_is_a_package(tier: str) -> None:
    """The tests are packages (`tests.integration.serve.conftest`): a folder without `__init__.py` would make
    pytest import its files by basename, and two `test_command.py` would collide."""
    top = ROOT / "tests" / tier
    missing = []
    for folder in folders_with_tests(tier):
        missing += [str(part) for part in [folder, *folder.parents][:-1] if not (top / part / "__init__.py").is_file()]
    assert not sorted(set(missing))
