"""A soak series' least-squares slope per hour, its noise, and the flat verdict; the warm-up left out."""

from __future__ import annotations

import math
import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from turnstream_tools.benchmarks.trend import Trend, trend, warm_up_seconds

finite = st.floats(min_value=-1e6, max_value=1e6, allow_nan=False)
times = st.lists(st.floats(min_value=0, max_value=7200, allow_nan=False), min_size=3, max_size=60, unique=True).filter(
    lambda ts: max(ts) - min(ts) > 1
)


@given(times, finite, finite)
def test_an_exact_line_gives_its_slope_per_hour_and_no_noise(
    seconds: list[float], start: float, per_hour: float
) -> None:
    values = [start + per_hour * s / 3600 for s in seconds]
    found = trend(seconds, values)
    scale = max(abs(start), abs(per_hour), 1.0)
    assert found.slope_per_hour == pytest.approx(per_hour, abs=1e-6 * scale)
    assert found.stderr_per_hour <= 1e-6 * scale
    assert found.samples == len(seconds)
    assert found.start == pytest.approx(start + per_hour * min(seconds) / 3600, abs=1e-6 * scale)


@given(times, finite, finite)
def test_an_offset_moves_nothing_but_the_start(seconds: list[float], offset: float, per_hour: float) -> None:
    values = [per_hour * s / 3600 + math.sin(s) for s in seconds]
    base, moved = trend(seconds, values), trend(seconds, [v + offset for v in values])
    scale = max(abs(offset), abs(per_hour), 1.0)
    assert moved.slope_per_hour == pytest.approx(base.slope_per_hour, abs=1e-6 * scale)
    assert moved.stderr_per_hour == pytest.approx(base.stderr_per_hour, abs=1e-6 * scale)
    assert moved.flat == base.flat or abs(abs(base.change) - base.noise) < 1e-6 * scale


# fixed seeds: pure noise has a slope beyond 2 residual deviations a few times in 10,000 runs, and a test that
# fails by chance says nothing
@given(st.sampled_from(range(200)), st.floats(min_value=0.1, max_value=1000))
def test_noise_around_a_level_is_flat(seed: int, spread: float) -> None:
    rng = random.Random(seed)
    seconds = [30.0 * n for n in range(40)]
    found = trend(seconds, [500 + rng.gauss(0, spread) for _ in seconds])
    assert found.flat
    assert abs(found.change) <= found.noise


@given(st.integers(min_value=0, max_value=2**32 - 1), st.floats(min_value=0.1, max_value=10))
def test_a_drift_well_above_the_scatter_is_not_flat(seed: int, spread: float) -> None:
    rng = random.Random(seed)
    seconds = [30.0 * n for n in range(40)]
    # 100 spreads over the run: far beyond 2 standard errors and 2 residual deviations
    per_hour = 100 * spread / (seconds[-1] / 3600)
    found = trend(seconds, [per_hour * s / 3600 + rng.gauss(0, spread) for s in seconds])
    assert not found.flat
    assert found.change > 0


def test_a_constant_series_is_flat_and_two_samples_have_no_error_to_estimate() -> None:
    assert trend([0, 60, 120], [7, 7, 7]) == Trend(3, 0.0, 0.0, 0.0, 120 / 3600, 7.0)
    assert trend([0, 60, 120], [7, 7, 7]).flat
    two = trend([0, 3600], [1, 3])
    assert (two.slope_per_hour, two.stderr_per_hour, two.flat) == (2.0, 0.0, False)


@pytest.mark.parametrize(
    ("seconds", "values"), [([], []), ([1.0], [1.0]), ([1.0, 2.0], [1.0]), ([5.0, 5.0], [1.0, 2.0])]
)
def test_too_few_samples_or_one_time_have_no_trend(seconds: list[float], values: list[float]) -> None:
    with pytest.raises(ValueError):
        trend(seconds, values)


@pytest.mark.parametrize(("run", "left_out"), [(3600, 300), (600, 60), (12, 1.2), (3000, 300)])
def test_the_warm_up_is_five_minutes_or_a_tenth_whichever_is_shorter(run: float, left_out: float) -> None:
    assert warm_up_seconds(run) == pytest.approx(left_out)
