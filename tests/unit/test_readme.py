from pathlib import Path

import pytest

from turnstream.cli import SUBCOMMANDS
from turnstream.settings import Settings


README = (Path(__file__).parents[2] / "README.md").read_text()


@pytest.mark.parametrize("name", list(Settings.model_fields))
def test_every_setting_is_documented(name: str) -> None:
    field = Settings.model_fields[name]
    variable = field.validation_alias.choices[0] if field.validation_alias else f"TURNSTREAM_{name.upper()}"
    assert f"`{variable}`" in README


@pytest.mark.parametrize("command", SUBCOMMANDS)
def test_every_subcommand_is_documented(command: str) -> None:
    assert f"`turnstream {command}" in README


def test_quick_start_is_the_two_make_commands() -> None:
    quick_start = README.split("## Quick start", 1)[1].split("##", 1)[0]
    commands = [line.split("#")[0].strip() for line in quick_start.splitlines() if line.startswith("make ")]
    assert commands == ["make demo", "make test"]
