"""`turnstream mcp`: refusals before it starts are one line and a non-zero exit."""

from __future__ import annotations

import pytest

from turnstream.cli import main


@pytest.fixture(autouse=True)
def services_configured(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TURNSTREAM_KAFKA_URL", "kafka://127.0.0.1:1")
    monkeypatch.setenv("TURNSTREAM_REDIS_URL", "redis://127.0.0.1:1/0")
    for name in ("TURNSTREAM_SERVE_TOKENS", "TURNSTREAM_SERVE_TOKENS_FILE", "TURNSTREAM_MCP_TENANT"):
        monkeypatch.delenv(name, raising=False)


@pytest.mark.parametrize(
    "argv, message",
    [
        (["mcp", "--http"], "no tokens configured"),
        (["mcp", "--tenant", "a:b"], "--tenant 'a:b': 1-64 of"),
        (["mcp", "--port", "0"], "--bind, --port and --tokens-file are for --http"),
        (["mcp", "--http", "--tenant", "acme"], "--tenant is for stdio"),
    ],
)
def test_refusals_are_one_line(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1
