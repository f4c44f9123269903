"""`turnstream bench --soak` for a few seconds and `turnstream bench --scale-out --quick` on their own embedded stacks:
figures with sane fields, the soak's samples at their interval, the scale-out's rounds on both sides."""

from __future__ import annotations

import math
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest

from turnstream_tools.benchmarks.soak import SERIES


def _bench(tmp_path: Path, *args: str) -> tuple[dict[str, Any], str]:
    path = tmp_path / "bench.json"
    env = {k: v for k, v in os.environ.items() if k not in ("TURNSTREAM_KAFKA_URL", "TURNSTREAM_REDIS_URL")}
    result = subprocess.run(
        [sys.executable, "-m", "turnstream", "bench", *args, "--json", str(path)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return orjson.loads(path.read_bytes())["figures"], result.stdout + result.stderr


def test_a_short_soak_samples_every_series_and_fits_each(tmp_path: Path) -> None:
    figures, output = _bench(
        tmp_path, "--soak", "--soak-rate", "50", "--soak-minutes", "0.2", "--soak-sample-seconds", "2"
    )
    (soak,) = figures.values()
    data = soak["data"]
    assert "turns sent" in output and "latest: RSS" in output  # the display's last state
    assert 5 <= len(data["samples"]) <= 6
    ats = [sample["at"] for sample in data["samples"]]
    assert ats == sorted(ats) and all(1.5 < b - a < 2.5 for a, b in zip(ats, ats[1:]))
    for sample in data["samples"]:
        assert 50 < sample["worker_process_rss_mb"] <= sample["worker_rss_mb"] < 4000 and sample["consumer_lag"] >= 0
        assert sample["redis_bytes_per_owner"] > 0
    assert data["sent"] >= 0.9 * 50 * 12 and data["warm_up_seconds"] == pytest.approx(1.2)
    # freshness, RSS, lag and Redis are fitted in so short a run; the embedder's lag when a window saw a vector
    assert {"worker_rss_mb", "consumer_lag", "freshness_p99_ms", "redis_bytes_per_owner"} <= set(data["trends"])
    for name, fitted in data["trends"].items():
        assert name in SERIES and fitted["samples"] >= 2 and isinstance(fitted["flat"], bool)
        assert math.isfinite(fitted["slope_per_hour"]) and fitted["stderr_per_hour"] >= 0
    assert soak["rows"][0]["measure"] == "turns sent a second vs asked" and soak["rows"][0]["b"] == 50
    assert isinstance(soak["target"]["met"], bool)


def test_scale_out_drains_the_same_backlog_with_one_worker_and_two(tmp_path: Path) -> None:
    figures, _ = _bench(tmp_path, "--scale-out", "--quick")
    (scale,) = figures.values()
    rate = scale["rows"][0]
    assert rate["unit"] == "turns/s" and rate["a"] > 0 and rate["b"] > 0
    assert rate["ratio"] == rate["a"] / rate["b"]
    rounds = scale["data"]["rounds"]
    assert len(rounds["one worker"]) == len(rounds["two workers"]) == 2
    shares = {row["measure"]: row for row in scale["rows"][1:]}
    assert shares["workers CPU while draining"]["a"] > 0 and shares["workers CPU while draining"]["b"] > 0
    assert 0 < shares["machine busy while draining (every process)"]["a"] <= 100
    assert isinstance(scale["target"]["met"], bool)
    assert "each worker on a core of its own" in scale["data"]["placement"] or os.cpu_count() == 1
