"""`turnstream compact`: input shapes, defaults, one-line errors with exit status 2."""

from __future__ import annotations

import io
import sys
from pathlib import Path

import orjson
import pytest

from tests.support.llm_server import llm_server  # noqa: F401  (a fixture, found by name)
from tests.unit.compaction.helpers import call, result, sys_, thought, user
from turnstream.cli import main

CONVERSATION = [
    sys_(),
    user("plan a week in japan"),
    *(thought(f"step {i} " + "hotel and train " * 20) for i in range(20)),
]


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, dict | None, str]:
    code = main(["compact", *argv])
    captured = capsys.readouterr()
    return code, (orjson.loads(captured.out) if captured.out else None), captured.err


@pytest.mark.parametrize(
    "encode",
    [
        lambda ms: orjson.dumps(ms),
        lambda ms: orjson.dumps({"messages": ms, "session_id": "s1"}),
        lambda ms: b"\n".join(orjson.dumps(m) for m in ms) + b"\n",
    ],
    ids=["array", "object", "jsonl"],
)
def test_every_input_shape_gives_the_contract(encode, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "conversation"
    path.write_bytes(encode(CONVERSATION))
    code, out, err = run([str(path), "--budget-tokens", "300"], capsys)
    assert (code, err) == (0, "")
    assert set(out) == {
        "messages",
        "positions",
        "message_tokens",
        "language",
        "marker_index",
        "dropped",
        "summary",
        "facts",
        "tokens",
    }  # type: ignore[arg-type]
    assert out["tokens"]["budget"] == 300 and out["tokens"]["after"] <= 300  # type: ignore[index]
    assert out["marker_index"] == 2 and out["messages"][:2] == CONVERSATION[:2]  # type: ignore[index]
    assert out["summary"]  # the default offline strategies digested the dropped span  # type: ignore[index]


def test_stdin_and_the_default_budget(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("TURNSTREAM_BUDGET_TOKENS", "250")
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(orjson.dumps(CONVERSATION))))
    code, out, _ = run(["-", "--budget-messages", "4"], capsys)
    assert code == 0 and out["tokens"]["budget"] == 250 and len(out["messages"]) <= 4  # type: ignore[index]


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (
            orjson.dumps([sys_(), user("go"), call("a"), user("again")]),
            "invalid input: message 3: a user message cannot come before",
        ),
        (orjson.dumps([user("go"), result("x")]), "invalid input: message 1: tool result 'x' answers no earlier"),
        (orjson.dumps([user("go"), {"role": "bot", "content": "x"}]), "invalid input: message 1: unknown role 'bot'"),
        (b'{"role": "user", "content": "a"}\n{"role": ', "input is not a JSON array of messages"),
        (orjson.dumps({"turns": []}), "input is not a JSON array of messages"),
        (b"\n\n", "input is empty"),
    ],
    ids=["order", "orphan", "role", "json", "shape", "empty"],
)
def test_bad_input_is_one_line_and_exit_2(
    data: bytes, expected: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "bad.json"
    path.write_bytes(data)
    code, out, err = run([str(path)], capsys)
    assert (code, out) == (2, None)
    assert err.startswith(f"turnstream: {expected}") and err.count("\n") == 1


def test_missing_file_and_bad_budget(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert run([str(tmp_path / "nope.json")], capsys)[0] == 2
    path = tmp_path / "c.json"
    path.write_bytes(orjson.dumps(CONVERSATION))
    code, _, err = run([str(path), "--budget-tokens", "0"], capsys)
    assert code == 2 and "--budget-tokens must be positive" in err


def test_llm_needs_a_base_url(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for name in ("OPENAI_BASE_URL", "TURNSTREAM_OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    path = tmp_path / "c.json"
    path.write_bytes(orjson.dumps(CONVERSATION))
    code, out, err = run([str(path), "--llm"], capsys)
    assert (code, out) == (2, None)
    assert err == "turnstream: --llm needs an OpenAI-compatible endpoint: set OPENAI_BASE_URL\n"


def test_llm_strategies_talk_to_the_configured_endpoint(
    llm_server,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    def reply(body: dict) -> str:
        wants_facts = "json" in orjson.dumps(body["messages"]).decode().lower()
        return '{"facts": []}' if wants_facts else "The user plans a week in Japan."

    server = llm_server(reply=reply)
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
    path = tmp_path / "c.json"
    path.write_bytes(orjson.dumps(CONVERSATION))
    code, out, err = run([str(path), "--budget-tokens", "300", "--llm"], capsys)
    assert (code, err) == (0, "")
    assert server.count > 0 and "The user plans a week in Japan." in out["summary"]  # type: ignore[index]
    assert out["summary"] in out["messages"][3]["content"]  # type: ignore[index]
