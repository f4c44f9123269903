"""The shadow's token bucket and LLM call cap: pure, the time given."""

from __future__ import annotations

import asyncio
from typing import Any, cast

import pytest
from hypothesis import given
from hypothesis import strategies as st

from turnstream.agents.summarizer import Summarizer
from turnstream.agents.throttle import CallCap, TokenBucket, bucket_for
from turnstream.schemas.summaries import SummaryRequest
from turnstream.settings import Settings

pytestmark = pytest.mark.unit


def test_a_fresh_bucket_lets_a_burst_through_then_waits_for_the_rest() -> None:
    bucket = TokenBucket(rate=10, burst=10)
    assert bucket.take(10, now=100.0) == 0.0
    assert bucket.take(5, now=100.0) == pytest.approx(0.5)  # five tokens at ten a second
    assert bucket.take(5, now=100.5) == pytest.approx(0.5)  # the debt was paid by the wait: five more


def test_an_idle_bucket_fills_up_to_its_burst_only() -> None:
    bucket = TokenBucket(rate=10, burst=10)
    bucket.take(10, now=0.0)
    assert bucket.take(10, now=60.0) == 0.0  # a minute idle is still one burst
    assert bucket.take(1, now=60.0) == pytest.approx(0.1)


def test_a_batch_bigger_than_the_burst_goes_at_once_and_is_paid_off_after() -> None:
    bucket = TokenBucket(rate=4, burst=4)
    assert bucket.take(12, now=0.0) == pytest.approx(2.0)  # goes after (12 - 4) / 4 seconds


@given(
    rate=st.floats(0.5, 500),
    batches=st.lists(st.tuples(st.integers(1, 300), st.floats(0, 3)), min_size=1, max_size=40),
)
def test_a_caller_that_waits_as_told_never_outruns_the_rate_past_one_burst(
    rate: float, batches: list[tuple[int, float]]
) -> None:
    bucket = bucket_for(rate)
    assert bucket is not None
    now, taken = 0.0, 0
    for count, idle in batches:
        now += idle
        now += bucket.take(count, now)  # the batch goes once its wait is over
        taken += count
        # what went by `now` is at most a burst, a second's worth, plus what the rate allows since the start
        assert taken <= bucket.burst + rate * now + 1e-6 * taken
        # and a batch's own tokens are never counted before it waited for them
        assert bucket.tokens >= -count - 1e-9


def test_no_rate_no_bucket_and_a_slow_rate_still_takes_one_record_at_once() -> None:
    assert bucket_for(None) is None
    slow = bucket_for(0.2)
    assert slow is not None and slow.burst == 1.0 and slow.take(1, now=0.0) == 0.0


def test_the_llm_cap_counts_the_calls_and_refuses_past_it() -> None:
    cap = CallCap(2)
    assert [cap.take() for _ in range(4)] == [True, True, False, False]
    assert cap.used == 2
    uncapped = CallCap(None)
    assert all(uncapped.take() for _ in range(100)) and uncapped.used == 100
    assert CallCap(0).take() is False


def test_past_the_cap_the_summarizer_answers_offline_without_a_call() -> None:
    settings = Settings(TURNSTREAM_OPENAI_BASE_URL="http://llm:8000/v1", llm_max_calls=0)
    summarizer = Summarizer(settings, cast(Any, None), cast(Any, None))  # any call would fail on None
    answer = asyncio.run(summarizer.answer(SummaryRequest("s", 1, "", [{"role": "user", "content": "hi"}], "o")))
    assert (answer.summary, answer.error) == (None, "TURNSTREAM_LLM_MAX_CALLS reached")
