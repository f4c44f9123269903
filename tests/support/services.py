"""Checks shared by the tests of commands that start the embedded services themselves."""

from __future__ import annotations

import signal
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from turnstream.stack.services import kafka_answers, redis_answers

BROKERS = ("kafka", "tansu")
"""The `broker` parameter's values: Apache Kafka, the embedded Tansu."""
on_each_broker = pytest.mark.parametrize("broker", BROKERS)
"""Runs a test once on Apache Kafka and once on the embedded Tansu."""
on_tansu = pytest.mark.parametrize("broker", ["tansu"])
"""Runs a test of the embedded default on Tansu only, whatever broker the others take."""


def port_of(url: str) -> int:
    """The port of `kafka://host:port` or `redis://host:port/db`."""
    return int(url.rsplit(":", 1)[1].split("/")[0])


def assert_sigterm_stops(process: subprocess.Popen[str], kafka_port: int, redis_port: int, within: float) -> None:
    """SIGTERM ends `process` with status 0 within `within` seconds, and both services with it."""
    assert kafka_answers(kafka_port) and redis_answers(redis_port)
    stopping = time.monotonic()
    process.send_signal(signal.SIGTERM)
    assert process.wait(timeout=within) == 0
    assert time.monotonic() - stopping < within
    assert not kafka_answers(kafka_port) and not redis_answers(redis_port)


@contextmanager
def killed_on_failure(process: subprocess.Popen[str]) -> Iterator[subprocess.Popen[str]]:
    """Whatever the test asserts, the process does not outlive it."""
    try:
        yield process
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
