"""The README is a front door: small, the two commands first, every subcommand named."""

from pathlib import Path

import pytest

from turnstream.cli import SUBCOMMANDS

README_PATH = Path(__file__).parents[3] / "README.md"
README = README_PATH.read_text(encoding="utf-8")
MAX_BYTES = 16 * 1024


def test_the_readme_stays_a_front_door() -> None:
    assert README_PATH.stat().st_size <= MAX_BYTES, "README.md is over 16 KB: move the reference into docs/"


@pytest.mark.parametrize("command", SUBCOMMANDS)
def test_every_subcommand_is_documented(command: str) -> None:
    assert f"`turnstream {command}" in README


def test_quick_start_is_the_two_make_commands() -> None:
    quick_start = README.split("## Quick start", 1)[1].split("##", 1)[0]
    commands = [line.split("#")[0].strip() for line in quick_start.splitlines() if line.startswith("make ")]
    assert commands == ["make demo", "make test"]


def test_quick_start_is_the_first_section() -> None:
    assert README.split("\n## ", 1)[1].startswith("Quick start\n")
