from pathlib import Path

import jsonschema
import orjson
import pytest

from tests.unit.schemas.samples import BAD, GOOD
from turnstream.schemas.context import ContextDoc
from turnstream.schemas.export import RECORDS, json_schema
from turnstream.schemas.turn import TurnError, decode_turn

TURN_VALIDATOR = jsonschema.Draft202012Validator(json_schema("turn"))
# the schema speaks about JSON documents: bytes that are not JSON never reach it
JSON_BAD = [(name, value) for name, value, reason in BAD if reason not in ("invalid_utf8", "not_json")]


@pytest.mark.parametrize("name", RECORDS)
def test_schemas_are_valid_draft_2020_12_with_id_and_title(name: str) -> None:
    schema = json_schema(name)
    jsonschema.Draft202012Validator.check_schema(schema)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["$id"] == f"urn:turnstream:schema:{name}:v1"
    assert schema["title"] and schema["description"]
    assert all(prop.get("description") for prop in schema["properties"].values())


@pytest.mark.parametrize(("name", "value"), GOOD, ids=[name for name, _ in GOOD])
def test_schema_accepts_what_the_decoder_accepts(name: str, value: bytes) -> None:
    decode_turn(value, 1 << 20)
    TURN_VALIDATOR.validate(orjson.loads(value))


@pytest.mark.parametrize(("name", "value"), JSON_BAD, ids=[name for name, _ in JSON_BAD])
def test_schema_refuses_what_the_decoder_refuses(name: str, value: bytes) -> None:
    with pytest.raises(TurnError):
        decode_turn(value, 1 << 20)
    assert not TURN_VALIDATOR.is_valid(orjson.loads(value))


def test_context_schema_validates_a_document() -> None:
    doc = ContextDoc(
        session_id="s",
        version=3,
        last_turn_id="t3",
        updated_at=1.0,
        messages=[{"role": "user", "content": "hi"}],
        facts=[{"type": "fact", "text": "x", "key": "k"}],
        tokens={"before": 10, "after": 5, "budget": 8},
        timings={"compaction": 0.4},
    )
    validator = jsonschema.Draft202012Validator(json_schema("context"))
    validator.validate(orjson.loads(doc.to_json()))
    assert not validator.is_valid({**orjson.loads(doc.to_json()), "version": -1})
    assert ContextDoc.from_json(doc.to_json()) == doc


def test_schema_command_writes_the_schema(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from turnstream.cli import main

    out = tmp_path / "turn.json"
    assert main(["schema", "turn", "--out", str(out)]) == 0
    assert orjson.loads(out.read_bytes()) == json_schema("turn")
    assert main(["schema", "context"]) == 0
    assert orjson.loads(capsys.readouterr().out) == json_schema("context")
