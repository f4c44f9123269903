"""`turnstream worker` on the embedded default: it starts its own services and SIGTERM stops everything."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time

import pytest

from turnstream.streams.embedded import kafka_answers, redis_answers

pytestmark = pytest.mark.integration


def test_sigterm_stops_the_worker_and_the_services_it_started() -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("TURNSTREAM_KAFKA_URL", "TURNSTREAM_REDIS_URL")}
    process = subprocess.Popen(
        [sys.executable, "-m", "turnstream", "worker", "--loglevel", "info"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env,
    )
    try:
        kafka_url = process.stderr.readline().strip()
        redis_url = process.stderr.readline().strip()
        assert kafka_url.startswith("KAFKA_URL=kafka://127.0.0.1:") and redis_url.startswith("REDIS_URL=redis://127.0.0.1:")
        kafka_port = int(kafka_url.rsplit(":", 1)[1])
        redis_port = int(redis_url.rsplit(":", 1)[1].split("/")[0])
        deadline = time.monotonic() + 60
        for line in process.stderr:  # the worker is up once Faust logs its first assignment
            if "Setting newly assigned partitions" in line or time.monotonic() > deadline:
                break
        assert kafka_answers(kafka_port) and redis_answers(redis_port)
        drain = threading.Thread(target=process.stderr.read, daemon=True)  # keep the log pipe open to the end
        drain.start()
        stopping = time.monotonic()
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=30) == 0
        assert time.monotonic() - stopping < 30
        assert not kafka_answers(kafka_port) and not redis_answers(redis_port)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
