"""docs/configuration.md documents every setting, with the table the Settings docstrings render."""

from pathlib import Path

import pytest

from turnstream.settings import Settings
from turnstream.settings_doc import END, generated_block, rewrite, settings_table, variable

CONFIGURATION = (Path(__file__).parents[3] / "docs" / "configuration.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("name", list(Settings.model_fields))
def test_every_setting_is_documented(name: str) -> None:
    assert f"`{variable(name, Settings.model_fields[name])}`" in CONFIGURATION


def test_the_table_is_the_one_the_docstrings_render() -> None:
    assert generated_block(CONFIGURATION) == settings_table(), (
        "docs/configuration.md is out of date: run python -m turnstream.settings_doc docs/configuration.md"
    )


def test_a_rewrite_replaces_only_the_table() -> None:
    stale = CONFIGURATION.replace("| `TURNSTREAM_BUDGET_TOKENS` | `4000` |", "| `TURNSTREAM_BUDGET_TOKENS` | `1` |")
    assert stale != CONFIGURATION
    assert rewrite(stale + "\nafter\n") == CONFIGURATION + "\nafter\n"
    assert rewrite(CONFIGURATION).count(END) == 1


def test_aliased_settings_are_documented_under_their_alias() -> None:
    assert variable("openai_base_url", Settings.model_fields["openai_base_url"]) == "OPENAI_BASE_URL"
    assert variable("budget_tokens", Settings.model_fields["budget_tokens"]) == "TURNSTREAM_BUDGET_TOKENS"
