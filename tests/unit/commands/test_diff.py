"""`turnstream diff NAME`: what it refuses, in one line, before it reads anything."""

from __future__ import annotations

import pytest

from turnstream.cli import main

pytestmark = pytest.mark.unit


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    try:
        code = main(["diff", *args])
    except SystemExit as exit_:
        code = int(exit_.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(autouse=True)
def services(monkeypatch: pytest.MonkeyPatch) -> None:
    """URLs nothing listens on: each case here fails before it connects."""
    monkeypatch.setenv("TURNSTREAM_KAFKA_URL", "kafka://127.0.0.1:1")
    monkeypatch.setenv("TURNSTREAM_REDIS_URL", "redis://127.0.0.1:1/0")
    monkeypatch.setenv("TURNSTREAM_TOPIC_PREFIX", "live")


@pytest.mark.parametrize(
    ("args", "code", "said"),
    [
        (("live",), 2, "turnstream: 'live' is the live prefix (TURNSTREAM_TOPIC_PREFIX): name a shadow"),
        (("bad name!",), 2, "turnstream: invalid TURNSTREAM_TOPIC_PREFIX:"),
        (("shadow", "--shadow-set", "budget"), 2, "turnstream: --shadow-set 'budget': not FIELD=VALUE"),
        (("shadow", "--shadow-set", "no_such=1"), 2, "turnstream: --shadow-set 'no_such=1': not FIELD=VALUE"),
        (
            ("shadow", "--shadow-set", "prompt_budget_tokens=lots"),
            2,
            "turnstream: invalid TURNSTREAM_PROMPT_BUDGET_TOKENS",
        ),
        (("shadow", "--sessions", "0"), 2, "argument --sessions: must be at least 1"),
        (("shadow", "--sessions", "2", "--all"), 2, "not allowed with argument --sessions"),
        (("shadow", "--labels", "/no/such/labels.json"), 2, "turnstream: cannot read --labels /no/such/labels.json"),
    ],
)
def test_a_bad_argument_fails_in_one_line(
    capsys: pytest.CaptureFixture[str], args: tuple[str, ...], code: int, said: str
) -> None:
    got, out, err = run(capsys, *args)
    assert (got, out) == (code, "")
    assert len(err.strip().splitlines()) == 1 and said in err, err
