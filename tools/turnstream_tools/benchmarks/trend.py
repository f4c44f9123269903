"""Whether a series sampled over a long run stays flat: its least-squares slope, the slope's noise, and the verdict.

Flat means the change the fitted line makes over the measured part of the run, |slope| x duration, is within
noise: at most twice the slope's standard error times the duration (the slope cannot be told from zero at about
95 %), or at most twice the residuals' standard deviation (the drift is no larger than the series' own scatter
from one sample to the next). Pure: the soak (soak.py) gives it the samples.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

SECONDS_PER_HOUR = 3600.0
NOISE_FACTOR = 2.0
"""How many standard errors (or residual deviations) a change may be and still count as noise."""
WARM_UP_SECONDS = 300.0
WARM_UP_SHARE = 0.1


def warm_up_seconds(run_seconds: float) -> float:
    """The start of a run left out of every trend: the first 5 minutes or 10 % of the run, whichever is shorter."""
    return min(WARM_UP_SECONDS, WARM_UP_SHARE * run_seconds)


@dataclass(frozen=True)
class Trend:
    """A series' least-squares line, per hour, with its noise and whether the change over the run is within it."""

    samples: int
    slope_per_hour: float
    stderr_per_hour: float
    """The slope's standard error (0 with fewer than three samples: no residual to estimate it from)."""
    residual_sd: float
    hours: float
    """From the first sample fitted to the last."""
    start: float
    """The fitted value at the first sample."""

    @property
    def change(self) -> float:
        """What the fitted line gains (or loses) over the run."""
        return self.slope_per_hour * self.hours

    @property
    def noise(self) -> float:
        """The largest change that counts as noise."""
        return NOISE_FACTOR * max(self.stderr_per_hour * self.hours, self.residual_sd)

    @property
    def flat(self) -> bool:
        return abs(self.change) <= self.noise

    def to_dict(self) -> dict[str, float | int | bool]:
        return {
            "samples": self.samples,
            "slope_per_hour": self.slope_per_hour,
            "stderr_per_hour": self.stderr_per_hour,
            "residual_sd": self.residual_sd,
            "hours": self.hours,
            "start": self.start,
            "change": self.change,
            "noise": self.noise,
            "flat": self.flat,
        }


def trend(seconds: Sequence[float], values: Sequence[float]) -> Trend:
    """The least-squares line of `values` against `seconds` (at least two distinct times)."""
    n = len(seconds)
    if n != len(values) or n < 2:
        raise ValueError(f"need at least two samples of time and value alike, got {n} and {len(values)}")
    hours = [s / SECONDS_PER_HOUR for s in seconds]
    mean_t, mean_v = math.fsum(hours) / n, math.fsum(values) / n
    sxx = math.fsum((t - mean_t) ** 2 for t in hours)
    if sxx == 0:
        raise ValueError("every sample at the same time: no slope")
    slope = math.fsum((t - mean_t) * (v - mean_v) for t, v in zip(hours, values)) / sxx
    intercept = mean_v - slope * mean_t
    residuals = [v - (intercept + slope * t) for t, v in zip(hours, values)]
    ssr = math.fsum(r * r for r in residuals)
    variance = ssr / (n - 2) if n > 2 else 0.0
    return Trend(
        samples=n,
        slope_per_hour=slope,
        stderr_per_hour=math.sqrt(variance / sxx),
        residual_sd=math.sqrt(variance),
        hours=max(hours) - min(hours),
        start=intercept + slope * min(hours),
    )
