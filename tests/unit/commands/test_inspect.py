"""`turnstream inspect`: refusals before it listens are one line and a non-zero exit."""

from __future__ import annotations

import pytest

from turnstream.cli import main


@pytest.fixture(autouse=True)
def redis_configured(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TURNSTREAM_REDIS_URL", "redis://127.0.0.1:1/0")  # nothing listens: refusals come first
    monkeypatch.delenv("TURNSTREAM_INSPECT_TOKEN", raising=False)


def test_a_non_loopback_address_without_a_token_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["inspect", "--host", "0.0.0.0"]) == 2
    assert (
        capsys.readouterr().err
        == "turnstream: listening on 0.0.0.0 needs TURNSTREAM_INSPECT_TOKEN (a loopback address needs none)\n"
    )


def test_a_blank_token_is_refused(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("TURNSTREAM_INSPECT_TOKEN", "  ")
    assert main(["inspect", "--host", "10.0.0.5"]) == 2
    assert capsys.readouterr().err == "turnstream: TURNSTREAM_INSPECT_TOKEN is blank: set a real token or unset it\n"


@pytest.mark.parametrize(("port", "why"), [("99999", "port out of range: 99999"), ("web", "not a port number: 'web'")])
def test_a_bad_port_is_one_line(port: str, why: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["inspect", "--port", port])
    assert exit_info.value.code == 2
    assert capsys.readouterr().err == f"turnstream inspect: error: argument --port: {why} (see --help)\n"


def test_an_unreachable_redis_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["inspect", "--port", "0"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("turnstream: cannot reach Redis:") and err.count("\n") == 1
