"""What the API says of the worker: turns that wait with no commit of the worker group for a while."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from turnstream.serve.worker_watch import STALL_SECONDS, Progress, worker_state

TOPIC, GROUP, PREFIX = "turnstream.turns", "turnstream-worker", "turnstream"


def test_turns_waiting_with_no_commit_are_a_stall_once_they_waited_long_enough() -> None:
    progress = Progress()
    progress.observe({0: 0, 1: 0}, {0: 0, 1: 0}, now=100.0)  # nothing recorded yet: nothing waits
    assert progress.stalled_for(200.0) is None
    progress.observe({0: 0, 1: 0}, {0: 2, 1: 0}, now=110.0)  # two turns, no worker
    progress.observe({0: 0, 1: 0}, {0: 2, 1: 0}, now=112.0)
    assert progress.stalled_for(110.0 + STALL_SECONDS - 0.1) is None
    assert progress.stalled_for(110.0 + STALL_SECONDS + 3) == STALL_SECONDS + 3


def test_a_commit_restarts_the_clock_and_a_drained_topic_stops_it() -> None:
    progress = Progress()
    progress.observe({0: 0}, {0: 5}, now=0.0)
    progress.observe({0: 3}, {0: 9}, now=20.0)  # the worker applied some: behind, not stalled
    assert progress.stalled_for(21.0) is None
    assert progress.stalled_for(20.0 + STALL_SECONDS) == STALL_SECONDS
    progress.observe({0: 9}, {0: 9}, now=22.0)  # all applied
    assert progress.stalled_for(1000.0) is None


@given(st.dictionaries(st.integers(0, 7), st.integers(0, 1000), min_size=1), st.floats(0, 1e6))
def test_a_group_that_committed_every_end_never_stalls(ends: dict[int, int], later: float) -> None:
    progress = Progress()
    progress.observe(ends, ends, now=0.0)
    assert progress.stalled_for(later) is None


def test_the_state_says_what_to_do_only_on_a_stall() -> None:
    unknown = worker_state(None, 0.0, TOPIC, GROUP, PREFIX)
    assert (unknown.applying, unknown.detail) == (None, None)
    progress = Progress()
    progress.observe({0: 0}, {0: 1}, now=0.0)
    assert worker_state(progress, 1.0, TOPIC, GROUP, PREFIX).applying is True
    stalled = worker_state(progress, 42.0, TOPIC, GROUP, PREFIX)
    assert stalled.applying is False
    assert stalled.detail == (
        "no worker has applied a turn for 42 s: turns wait in turnstream.turns for the consumer group "
        "turnstream-worker (is `turnstream worker` running, with TURNSTREAM_TOPIC_PREFIX=turnstream?)"
    )
