"""A token bucket for the session agent: at most `rate` records a second on average, `burst` at once, so a replay
(a shadow) leaves the broker and Redis to the live worker. Pure: the caller gives the time and does the waiting."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class TokenBucket:
    """Tokens refill at `rate` a second up to `burst`; a batch takes one per record."""

    rate: float
    """Tokens added per second."""
    burst: float
    """Most tokens held: what a batch may take at once after an idle spell."""
    tokens: float = 0.0
    """Tokens held at `stamp`; below 0 while a batch bigger than the tokens held is paid off."""
    stamp: float | None = None
    """When `tokens` was last brought up to date; None before the first take."""

    def take(self, count: int, now: float) -> float:
        """Take `count` tokens at `now`; returns the seconds to wait before the batch goes (0 when they were held).

        A batch bigger than what is held goes into debt, paid off before the next batch: the average rate is
        kept whatever the batch sizes, without splitting a batch."""
        if self.stamp is None:
            self.tokens = self.burst  # a fresh bucket starts full
        else:
            self.tokens = min(self.burst, self.tokens + (now - self.stamp) * self.rate)
        self.stamp = now
        self.tokens -= count
        return 0.0 if self.tokens >= 0 else -self.tokens / self.rate


def bucket_for(rate: float | None) -> TokenBucket | None:
    """The bucket of TURNSTREAM_MAX_TURNS_PER_SECOND (a second's worth of burst, at least one record); None: no limit."""
    return None if rate is None else TokenBucket(rate, max(rate, 1.0))


@dataclass
class CallCap:
    """TURNSTREAM_LLM_MAX_CALLS: how many summary requests may still go to the LLM; None: no cap."""

    left: int | None
    used: int = 0

    def take(self) -> bool:
        """One call, if the cap allows it (counted); False once it is spent."""
        if self.left is not None and self.used >= self.left:
            return False
        self.used += 1
        return True
