"""The worker refuses faust-streaming and aiokafka releases outside the range faust_private was tested with."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

from turnstream import cli
from turnstream.commands import worker
from turnstream.kafka.faust_private.versions import TESTED, refusal, release, untested

pytestmark = pytest.mark.unit

PYPROJECT = Path(__file__).parents[4] / "pyproject.toml"


@pytest.mark.parametrize(
    ("version", "expected"),
    [
        ("0.15.3", (0, 15, 3)),
        ("0.16.0rc1", (0, 16, 0)),
        ("v1.2", (1, 2)),
        ("unknown", ()),
        ("", ()),
    ],
)
def test_release_is_the_leading_numbers(version: str, expected: tuple[int, ...]) -> None:
    assert release(version) == expected


@pytest.mark.parametrize("version", ["0.15.3", "0.15.4", "0.15.10"])
def test_a_faust_release_in_the_range_is_accepted(version: str) -> None:
    assert untested("faust-streaming", version) is None


@pytest.mark.parametrize("version", ["0.15.2", "0.16.0", "0.16.0rc1", "1.0", "0.9", "garbage"])
def test_a_faust_release_outside_the_range_is_refused_in_one_line(version: str) -> None:
    reason = untested("faust-streaming", version)
    assert reason is not None and "\n" not in reason
    assert f"faust-streaming {version}" in reason and ">=0.15.3,<0.16" in reason


@pytest.mark.parametrize(
    ("version", "refused"), [("0.11.0", True), ("0.12.0", False), ("0.14.0", False), ("0.15.0", True)]
)
def test_aiokafka_is_checked_too(version: str, refused: bool) -> None:
    assert (untested("aiokafka", version) is not None) is refused


def test_refusal_names_the_first_release_outside_its_range() -> None:
    assert refusal({"faust-streaming": "0.15.3", "aiokafka": "0.14.0"}) is None
    reason = refusal({"faust-streaming": "0.15.3", "aiokafka": "0.15.1"})
    assert reason is not None and reason.startswith("aiokafka 0.15.1 ")


def test_pyproject_pins_the_tested_ranges() -> None:
    project = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))["project"]
    requirements = project["dependencies"] + [r for extra in project["optional-dependencies"].values() for r in extra]
    for name, (low, high) in TESTED.items():
        pins = [r for r in requirements if re.match(rf"{re.escape(name)}\s*[<>=!~]", r)]
        assert pins == [f"{name}>={low},<{high}"], name


def test_the_worker_command_stops_in_one_line_on_an_untested_faust(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(worker, "installed_versions", lambda: {"faust-streaming": "0.16.0", "aiokafka": "0.14.0"})
    monkeypatch.setattr(worker, "require_extra", lambda extra: pytest.fail("the check comes before anything else"))
    assert cli.main(["worker"]) == 1
    out, err = capsys.readouterr()
    assert out == ""
    assert err.count("\n") == 1 and err.startswith("turnstream: faust-streaming 0.16.0 is outside")
    assert "Traceback" not in err


def test_faust_s_own_command_stops_in_one_line_on_an_untested_faust(monkeypatch: pytest.MonkeyPatch) -> None:
    import turnstream.agents.app as worker_app
    from turnstream.kafka.faust_private import versions

    monkeypatch.setattr(versions, "installed", lambda: {"faust-streaming": "0.16.0", "aiokafka": "0.14.0"})
    monkeypatch.setattr(worker_app, "create_app", lambda settings: pytest.fail("the check comes before the app"))
    with pytest.raises(SystemExit, match=r"^turnstream: faust-streaming 0.16.0 is outside") as stopped:
        _ = worker_app.app  # what `faust -A turnstream.agents.app worker` looks up
    assert "\n" not in str(stopped.value.code)


def test_the_installed_releases_pass() -> None:
    from turnstream.kafka.faust_private.versions import installed

    assert refusal(installed()) is None  # the environment the tests run in is a tested one
