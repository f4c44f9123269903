"""Small statistics shared by the demo report and the benchmarks."""

from __future__ import annotations

import math
from collections.abc import Sequence


def percentile(values: Sequence[float], q: float) -> float:
    """The q-th percentile (0..100) by linear interpolation; NaN for no values."""
    if not values:
        return math.nan
    ordered = sorted(values)
    rank = (len(ordered) - 1) * q / 100
    low, high = math.floor(rank), math.ceil(rank)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


def histogram_quantile(buckets: Sequence[tuple[float, float]], q: float) -> float:
    """The q-quantile (0..1) of a cumulative histogram [(upper bound, count ≤ bound)], as Prometheus estimates it."""
    if not buckets or buckets[-1][1] == 0:
        return math.nan
    target = q * buckets[-1][1]
    lower_bound, lower_count = 0.0, 0.0
    for bound, count in buckets:
        if count >= target:
            if math.isinf(bound):
                return lower_bound
            return lower_bound + (bound - lower_bound) * (target - lower_count) / max(count - lower_count, 1e-12)
        lower_bound, lower_count = bound, count
    return lower_bound
