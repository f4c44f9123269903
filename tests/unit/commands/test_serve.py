"""`turnstream serve`: every refusal before it listens is one line and a non-zero exit; flags beat variables;
`turnstream config` never shows a token."""

from __future__ import annotations

import argparse
from pathlib import Path

import orjson
import pytest

from turnstream.cli import main
from turnstream.commands.serve import tokens_of, with_flags
from turnstream.settings import Settings

TOKEN = "t0ken-of-acme-0123456789"


@pytest.fixture(autouse=True)
def services_configured(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TURNSTREAM_KAFKA_URL", "kafka://127.0.0.1:1")  # nothing listens: refusals come first
    monkeypatch.setenv("TURNSTREAM_REDIS_URL", "redis://127.0.0.1:1/0")
    for name in ("TURNSTREAM_SERVE_TOKENS", "TURNSTREAM_SERVE_TOKENS_FILE", "TURNSTREAM_SERVE_BIND"):
        monkeypatch.delenv(name, raising=False)


def refused(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and TOKEN not in err
    return err


def test_no_tokens_no_service(capsys: pytest.CaptureFixture[str]) -> None:
    assert "no tokens configured" in refused(["serve"], capsys)


def test_open_is_refused_beyond_loopback_and_beside_tokens(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert "loopback only; 0.0.0.0 is not" in refused(["serve", "--open", "--bind", "0.0.0.0"], capsys)
    monkeypatch.setenv("TURNSTREAM_SERVE_BIND", "192.0.2.1")
    assert "192.0.2.1 is not" in refused(["serve", "--open"], capsys)
    monkeypatch.setenv("TURNSTREAM_SERVE_TOKENS", f"{TOKEN}=acme")
    assert "tokens are configured" in refused(["serve", "--open", "--bind", "127.0.0.1"], capsys)


def test_a_bad_tokens_file_is_one_line_without_its_secrets(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "tokens"
    bad.write_text(f"{TOKEN} acme\n{TOKEN} globex\n")
    assert "token 2 is given twice" in refused(["serve", "--tokens-file", str(bad)], capsys)
    assert "cannot read the tokens file" in refused(["serve", "--tokens-file", str(tmp_path / "missing")], capsys)


def test_flags_override_the_variables(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("TURNSTREAM_SERVE_PORT", "9000")
    monkeypatch.setenv("TURNSTREAM_SERVE_MAX_BODY_BYTES", "4096")
    args = argparse.Namespace(bind="::1", port=0, tokens_file=None, max_body_bytes=None)
    settings = with_flags(Settings(), args)
    assert (settings.serve_bind, settings.serve_port, settings.serve_max_body_bytes) == ("::1", 0, 4096)
    tokens = tmp_path / "tokens.json"
    tokens.write_bytes(orjson.dumps({TOKEN: "acme"}))
    table = tokens_of(
        with_flags(Settings(), argparse.Namespace(bind=None, port=None, tokens_file=tokens, max_body_bytes=None)),
        open_=False,
    )
    assert table is not None and table.resolve(TOKEN) == "acme"


def test_config_masks_the_inline_tokens(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("TURNSTREAM_SERVE_TOKENS", f"{TOKEN}=acme")
    assert main(["config"]) == 0
    out = capsys.readouterr().out
    assert TOKEN not in out and orjson.loads(out)["serve_tokens"] == "***"
