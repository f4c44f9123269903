"""How a worker logs: text (Faust's own format, the default) or one JSON object per line on stderr."""

from __future__ import annotations

import logging
from typing import Any, Literal

LogFormat = Literal["text", "json"]
LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")
TEXT_FORMAT = "turnstream: %(levelname)s %(message)s"
"""Start-up lines in text mode, before Faust has set up its own logging."""
JSON_FIELDS = "{levelname}{name}{message}"
RENAMED = {"levelname": "level", "name": "logger"}


def parse_level(text: str) -> str:
    """A log level name in any case (`info`, `INFO`, `Info`; `warn` for WARNING), as logging spells it."""
    level = text.strip().upper()
    level = "WARNING" if level == "WARN" else level
    if level not in LEVELS:
        raise ValueError(f"unknown log level {text!r}: use one of {', '.join(name.lower() for name in LEVELS)}")
    return level


def json_formatter() -> logging.Formatter:
    """Each record as one JSON line: time (ISO 8601, UTC), level, logger, message, every `extra=` field, and a
    traceback as `exc_info` (a string, so a line never breaks)."""
    from pythonjsonlogger.json import JsonFormatter  # the worker extra's: settings parse levels without it

    return JsonFormatter(JSON_FIELDS, style="{", rename_fields=RENAMED, timestamp="time", json_ensure_ascii=False)


def formatter(fmt: LogFormat) -> logging.Formatter:
    return json_formatter() if fmt == "json" else logging.Formatter(TEXT_FORMAT)


def faust_logging_config(level: str, fmt: LogFormat) -> dict[str, Any] | None:
    """The `logging_config` for Faust's worker: the root logger (Faust's lines and ours) on stderr through the
    JSON formatter. None in text mode, which keeps Faust's own format."""
    if fmt == "text":
        return None
    return {
        "version": 1,
        "disable_existing_loggers": False,  # loggers made at import time (turnstream.agents.*) keep working
        "formatters": {"json": {"()": json_formatter}},
        "handlers": {"stderr": {"class": "logging.StreamHandler", "formatter": "json", "stream": "ext://sys.stderr"}},
        "root": {"level": level, "handlers": ["stderr"]},
    }


COORDINATOR_LOOKUP_FAILED = "Group Coordinator Request failed: %s"
"""aiokafka's line for each failed lookup of a group's coordinator, which it retries until one answers."""


class RetriedLookupsAsWarnings(logging.Filter):
    """aiokafka logs each failed coordinator lookup as an ERROR and retries it. On a broker that has just started
    the first lookups fail until the offsets topic has a leader (CoordinatorNotAvailable), so every fresh stack's
    worker opened with an ERROR that needed nothing done. A failure aiokafka retries (a retriable KafkaError) is
    logged as a WARNING; any other stays an ERROR."""

    def filter(self, record: logging.LogRecord) -> bool:
        error = record.args[0] if isinstance(record.args, tuple) and record.args else None
        if (
            record.msg == COORDINATOR_LOOKUP_FAILED
            and record.levelno > logging.WARNING
            and getattr(error, "retriable", False)
        ):
            record.levelno, record.levelname = logging.WARNING, "WARNING"
        return True


def retried_lookups_as_warnings() -> None:
    """Install RetriedLookupsAsWarnings on aiokafka's group coordinator logger, once a process."""
    coordinator = logging.getLogger("aiokafka.consumer.group_coordinator")
    if not any(isinstance(each, RetriedLookupsAsWarnings) for each in coordinator.filters):
        coordinator.addFilter(RetriedLookupsAsWarnings())
