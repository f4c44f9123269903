"""`turnstream worker` on the embedded default: it starts its own services and SIGTERM stops everything."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time

from tests.support.services import assert_sigterm_stops, killed_on_failure, port_of


def test_sigterm_stops_the_worker_and_the_services_it_started() -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("TURNSTREAM_KAFKA_URL", "TURNSTREAM_REDIS_URL")}
    process = subprocess.Popen(
        [sys.executable, "-m", "turnstream", "worker", "--loglevel", "info"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    with killed_on_failure(process):
        kafka_url = process.stderr.readline().strip()
        redis_url = process.stderr.readline().strip()
        assert kafka_url.startswith("KAFKA_URL=kafka://127.0.0.1:") and redis_url.startswith(
            "REDIS_URL=redis://127.0.0.1:"
        )
        deadline = time.monotonic() + 60
        for line in process.stderr:  # the worker is up once Faust logs its first assignment
            if "Setting newly assigned partitions" in line or time.monotonic() > deadline:
                break
        threading.Thread(target=process.stderr.read, daemon=True).start()  # keep the log pipe open to the end
        assert_sigterm_stops(process, port_of(kafka_url), port_of(redis_url), within=30)
