"""A running worker's Prometheus metrics for tests: scraped once, or until a condition holds."""

from __future__ import annotations

import asyncio
import time
import urllib.request
from collections.abc import Callable

from prometheus_client.parser import text_string_to_metric_families

from tests.support.worker import RunningWorker

Samples = dict[str, list[tuple[dict[str, str], float]]]


def scrape(port: int) -> Samples:
    """Every sample on the worker's metrics endpoint: name -> [(labels, value)]."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as response:
        text = response.read().decode()
    samples: Samples = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            samples.setdefault(sample.name, []).append((sample.labels, sample.value))
    return samples


async def scrape_until(port: int, worker: RunningWorker, done: Callable[[Samples], bool], timeout: float) -> Samples:
    """Scrape until `done` holds; fail with the last scrape."""
    deadline = time.monotonic() + timeout
    samples: Samples = {}
    while time.monotonic() < deadline:
        assert worker.poll() is None, f"worker exited with status {worker.poll()}"
        try:
            samples = scrape(port)
        except OSError:  # not listening yet
            samples = {}
        if samples and done(samples):
            return samples
        await asyncio.sleep(0.5)
    shown = {
        name: found
        for name, found in samples.items()
        if name.startswith("turnstream_") and not name.startswith("turnstream_stage_") and not name.endswith("_created")
    }
    raise AssertionError(f"not reached within {timeout:.0f}s: {shown}")
