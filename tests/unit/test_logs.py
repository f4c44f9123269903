"""Log levels in any case, JSON log lines, and the logging config handed to Faust's worker."""

from __future__ import annotations

import json
import logging
import logging.config
from collections.abc import Iterator

import pytest
from pydantic import ValidationError

from turnstream.cli import main
from turnstream.logs import faust_logging_config, json_formatter, parse_level
from turnstream.settings import Settings


@pytest.mark.parametrize(
    ("text", "level"),
    [
        ("info", "INFO"),
        ("INFO", "INFO"),
        ("Debug", "DEBUG"),
        (" warning ", "WARNING"),
        ("warn", "WARNING"),
        ("critical", "CRITICAL"),
    ],
)
def test_a_level_is_read_in_any_case(text: str, level: str) -> None:
    assert parse_level(text) == level


@pytest.mark.parametrize("text", ["loud", "", "20", "inf"])
def test_an_unknown_level_is_refused_with_the_choices(text: str) -> None:
    with pytest.raises(ValueError, match="use one of debug, info, warning, error, critical"):
        parse_level(text)


def test_settings_read_level_and_format_in_any_case() -> None:
    settings = Settings(log_level="Info", log_format="JSON")
    assert (settings.log_level, settings.log_format) == ("INFO", "json")
    assert (Settings().log_level, Settings().log_format) == ("WARNING", "text")
    with pytest.raises(ValidationError):
        Settings(log_format="xml")


def _record(message: str, **extra: object) -> logging.LogRecord:
    record = logging.LogRecord("turnstream.agents.ingest", logging.WARNING, __file__, 1, message, (), None)
    record.__dict__.update(extra)
    return record


def test_a_json_line_has_time_level_logger_message_and_the_extra_fields() -> None:
    line = json_formatter().format(
        _record("dead-lettered t/0/7 — 坏", session="s-1", turn_id="t-9", partition=0, offset=7)
    )
    assert "\n" not in line
    parsed = json.loads(line)
    assert parsed["level"] == "WARNING" and parsed["logger"] == "turnstream.agents.ingest"
    assert parsed["message"] == "dead-lettered t/0/7 — 坏"
    assert {k: parsed[k] for k in ("session", "turn_id", "partition", "offset")} == {
        "session": "s-1",
        "turn_id": "t-9",
        "partition": 0,
        "offset": 7,
    }
    assert parsed["time"].endswith("+00:00")


def test_a_traceback_stays_inside_one_json_line() -> None:
    try:
        raise ZeroDivisionError("boom")
    except ZeroDivisionError:
        import sys

        record = logging.LogRecord("x", logging.ERROR, __file__, 1, "failed", (), sys.exc_info())
    line = json_formatter().format(record)
    assert len(line.splitlines()) == 1
    assert "ZeroDivisionError: boom" in json.loads(line)["exc_info"]


def test_text_format_leaves_faust_its_own_logging() -> None:
    assert faust_logging_config("INFO", "text") is None


@pytest.fixture
def restored_root() -> Iterator[logging.Logger]:
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    yield root
    root.handlers[:] = handlers
    root.setLevel(level)


def test_the_json_config_sends_every_logger_through_the_formatter_at_the_level(
    restored_root: logging.Logger, capsys: pytest.CaptureFixture[str]
) -> None:
    logging.config.dictConfig(faust_logging_config("INFO", "json"))  # what Faust's worker applies
    logging.getLogger("faust.worker").info("[^Worker]: Starting...")
    logging.getLogger("turnstream.agents.batch").debug("not at INFO")
    logging.getLogger("turnstream.agents.batch").info("replay", extra={"session": "s", "offset": 3})
    lines = [json.loads(line) for line in capsys.readouterr().err.splitlines()]
    assert [(line["logger"], line["message"]) for line in lines] == [
        ("faust.worker", "[^Worker]: Starting..."),
        ("turnstream.agents.batch", "replay"),
    ]
    assert lines[1]["session"] == "s" and lines[1]["offset"] == 3


@pytest.mark.parametrize("flag", [["-l", "INFO"], ["--loglevel", "Debug"], ["-l", "warn"]])
def test_the_worker_takes_a_level_in_any_case_and_as_l(flag: list[str]) -> None:
    from turnstream.cli import build_parser

    args = build_parser().parse_args(["worker", *flag])
    assert args.loglevel == parse_level(flag[1])


def test_the_worker_refuses_an_unknown_level_in_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["worker", "-l", "loud"])
    assert exit_info.value.code == 2
    assert capsys.readouterr().err.strip().splitlines() == [
        "turnstream worker: error: argument -l/--loglevel: unknown log level 'loud': use one of debug, info, "
        "warning, error, critical (see --help)"
    ]


def test_a_bad_log_level_variable_is_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("TURNSTREAM_LOG_LEVEL", "loud")
    assert main(["worker"]) == 2
    assert capsys.readouterr().err.strip() == (
        "turnstream: invalid TURNSTREAM_LOG_LEVEL: unknown log level 'loud': use one of debug, info, warning, error, critical"
    )


def test_a_coordinator_lookup_aiokafka_retries_is_a_warning_and_any_other_failure_stays_an_error(
    caplog: pytest.LogCaptureFixture,
) -> None:
    from aiokafka import errors

    from turnstream.logs import COORDINATOR_LOOKUP_FAILED, retried_lookups_as_warnings

    coordinator = logging.getLogger("aiokafka.consumer.group_coordinator")
    before = list(coordinator.filters)
    try:
        retried_lookups_as_warnings()
        retried_lookups_as_warnings()  # once a process, however often the worker starts
        assert len(coordinator.filters) == len(before) + 1
        with caplog.at_level(logging.DEBUG, logger="aiokafka"):
            coordinator.error(COORDINATOR_LOOKUP_FAILED, errors.CoordinatorNotAvailableError())
            coordinator.error(COORDINATOR_LOOKUP_FAILED, errors.UnknownError())
            coordinator.error("Error sending JoinGroupRequest_v2: %s", errors.CoordinatorNotAvailableError())
        assert [record.levelname for record in caplog.records] == ["WARNING", "ERROR", "ERROR"]
    finally:
        coordinator.filters[:] = before
