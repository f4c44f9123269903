"""docs/protocol.md carries the tables the wire contracts render: the turn's fields, the control records and the
headers, each as schemas/ defines it, so a gateway written against the page is written against the code."""

import dataclasses
from pathlib import Path

import orjson
import pytest

from turnstream.schemas.control import ForgetRequest, PopRequest, forget_record, pop_record
from turnstream.schemas.headers import MEANINGS, OWN_HEADERS
from turnstream.schemas.protocol_doc import BLOCKS, generated_block, markers, rewrite
from turnstream.schemas.turn import Turn

PROTOCOL = (Path(__file__).parents[3] / "docs" / "protocol.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("name", list(BLOCKS))
def test_each_table_is_the_one_the_contracts_render(name: str) -> None:
    assert generated_block(PROTOCOL, name) == BLOCKS[name](), (
        "docs/protocol.md is out of date: run python -m turnstream.schemas.protocol_doc docs/protocol.md"
    )


def test_every_turn_field_and_header_is_in_the_page() -> None:
    for field in Turn.model_fields:
        assert f"| `{field}` |" in generated_block(PROTOCOL, "turn")
    assert set(OWN_HEADERS) <= set(MEANINGS)
    for header in MEANINGS:
        assert f"| `{header}` |" in generated_block(PROTOCOL, "headers")


def test_the_control_records_shown_are_the_ones_produced() -> None:
    shown = generated_block(PROTOCOL, "control")
    forget = orjson.loads(forget_record("acme:s-7", 1.5))["forget"]
    pop = orjson.loads(pop_record(PopRequest("s-7", "acme", "c1", 3, 12)))["pop"]
    names = [[field.name for field in dataclasses.fields(record)] for record in (ForgetRequest, PopRequest)]
    assert [list(forget), list(pop)] == names
    for record, body in (("forget", forget), ("pop", pop)):
        assert '`{"' + record + '": {' + ", ".join(f'"{field}": …' for field in body) + "}}`" in shown


def test_a_rewrite_replaces_only_the_generated_blocks() -> None:
    stale = PROTOCOL.replace("| `turn_id` | string | yes |", "| `turn_id` | integer | no |")
    assert stale != PROTOCOL
    assert rewrite(stale + "\nafter\n") == PROTOCOL + "\nafter\n"
    for name in BLOCKS:
        assert rewrite(PROTOCOL).count(markers(name)[1]) == 1
