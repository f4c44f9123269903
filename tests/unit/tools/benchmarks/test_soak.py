"""The soak's samples: consumer lag from commits and ends, RSS from /proc, the mixed traffic, and the figure."""

from __future__ import annotations

import os
from collections import Counter

import pytest
from hypothesis import given
from hypothesis import strategies as st

from turnstream.schemas.ids import session_key
from turnstream_tools.benchmarks.pinning import parse_rss_mb, rss_mb, tree_rss_mb
from turnstream_tools.benchmarks.soak import (
    OPEN_SESSIONS,
    SERIES,
    VECTOR_PROBE_EVERY,
    MixedTraffic,
    Sample,
    SoakPlan,
    Watch,
    consumer_lag,
    soak_figure,
)

offsets = st.dictionaries(st.integers(min_value=0, max_value=15), st.integers(min_value=0, max_value=10**9))


@given(offsets, offsets)
def test_consumer_lag_is_what_each_partition_holds_past_its_commit(
    committed: dict[int, int], ends: dict[int, int]
) -> None:
    lag = consumer_lag(committed, ends)
    assert lag == sum(max(end - committed.get(p, 0), 0) for p, end in ends.items())
    assert lag >= 0
    assert consumer_lag(ends, ends) == 0
    assert consumer_lag({}, ends) == sum(ends.values())


def test_a_commit_past_a_short_listed_end_counts_as_nothing_behind() -> None:
    assert consumer_lag({0: 120, 1: 5}, {0: 100, 1: 9}) == 4


def test_rss_is_read_from_the_status_text_in_megabytes() -> None:
    status = "Name:\tpython\nVmPeak:\t  900 kB\nVmRSS:\t  204800 kB\nThreads:\t4\n"
    assert parse_rss_mb(status) == 200.0
    with pytest.raises(ValueError):
        parse_rss_mb("Name:\tzombie\nState:\tZ (zombie)\n")
    assert 0 < rss_mb(os.getpid()) <= tree_rss_mb(os.getpid())


def test_the_traffic_mixes_chats_and_agent_traces_each_a_new_session_of_a_new_user() -> None:
    traffic = MixedTraffic()
    turns = [next(traffic) for _ in range(5000)]
    sessions = Counter(turn["session_id"] for turn in turns)
    assert len(sessions) > OPEN_SESSIONS  # conversations finish and new ones take their places
    users = {turn["session_id"]: turn["user_id"] for turn in turns}
    assert len(set(users.values())) == len(users)
    assert traffic.owners >= len(sessions)
    assert any(turn["message"].get("tool_calls") for turn in turns)
    assert any(turn["message"]["role"] == "tool" for turn in turns)
    seqs: dict[str, int] = {}
    for turn in turns:  # every session's turns in order, none left out
        assert turn["seq"] == seqs.get(turn["session_id"], -1) + 1
        seqs[turn["session_id"]] = turn["seq"]


def test_a_sent_turn_is_readable_once_a_version_including_it_is_published() -> None:
    watch = Watch()
    for seq in range(3):
        turn = {"turn_id": f"t-{seq}", "session_id": "s", "user_id": "u", "seq": seq, "message": {"role": "tool"}}
        watch.sent(turn, 1.0 + seq)
    channel = f"p:updates:{session_key('s')}"
    watch.published(channel, 2, 10.0)  # one batch applied the first two turns
    assert watch.window.freshness == [9.0, 8.0]
    assert list(watch.contexts[session_key("s")]) == [(3, 3.0)]
    watch.published(channel, 3, 10.5)
    watch.published(channel, 3, 11.0)  # a version heard again, and one of a session not sent: nothing more
    watch.published("p:updates:other", 9, 11.0)
    assert watch.window.freshness == [9.0, 8.0, 7.5] and not watch.contexts


def test_one_user_turn_in_so_many_is_probed_for_its_vector() -> None:
    watch = Watch()
    for seq in range(2 * VECTOR_PROBE_EVERY):
        message = {"role": "user", "content": "hi"} if seq % 2 == 0 else {"role": "assistant", "content": "hello"}
        watch.sent({"turn_id": f"t-{seq}", "session_id": "s", "user_id": "u", "seq": seq, "message": message}, 1.0)
    ((owner, position),) = watch.vectors
    assert position == f"{session_key('s')}#0" and "u" in owner
    assert watch.user_turns == VECTOR_PROBE_EVERY


def _sample(at: float, rss: float, fresh: float | None = 50.0) -> Sample:
    return Sample(at, int(at * 100), rss, rss / 3, 100, fresh, 120_000.0, 400.0)


def test_the_figure_has_a_row_a_series_and_leaves_out_the_warm_up() -> None:
    plan = SoakPlan(100, 10, 30)
    # RSS jumps in the first minute (the warm-up) and is level after; freshness measured in the last two only
    samples = [_sample(30 * n, 100 if n < 2 else 500, 50.0 if n > 17 else None) for n in range(1, 21)]
    figure = soak_figure(samples, plan, 60_000, 600, 0)
    assert figure.key == "soak" and figure.data["warm_up_seconds"] == 60
    assert [row.measure.split(" slope")[0] for row in figure.rows[1:]] == [label for label, _ in SERIES.values()]
    assert figure.rows[0].a == 100 and figure.rows[0].ratio == 1
    assert all(figure.data["trends"][name]["flat"] for name in SERIES)
    assert figure.data["trends"]["worker_rss_mb"]["samples"] == 19
    assert figure.data["trends"]["freshness_p99_ms"]["samples"] == 3
    assert figure.target is not None and figure.target.met
    assert len(figure.data["samples"]) == 20


def test_a_growing_series_fails_the_target_and_a_missing_one_too() -> None:
    plan = SoakPlan(100, 10, 30)
    growing = [_sample(30 * n, 100 + 10 * n) for n in range(1, 21)]
    figure = soak_figure(growing, plan, 60_000, 600, 0)
    assert (
        not figure.data["trends"]["worker_rss_mb"]["flat"]
        and not figure.data["trends"]["worker_process_rss_mb"]["flat"]
    )
    assert "not flat" in next(row.measure for row in figure.rows if row.measure.startswith("worker RSS"))
    assert figure.target is not None and not figure.target.met
    unmeasured = soak_figure([_sample(30 * n, 100, None) for n in range(1, 21)], plan, 60_000, 600, 0)
    assert "freshness_p99_ms" not in unmeasured.data["trends"]
    assert unmeasured.target is not None and not unmeasured.target.met


def test_a_series_that_levels_off_halfway_reads_not_flat_over_the_run_and_flat_in_its_second_half() -> None:
    plan = SoakPlan(100, 10, 30)
    # a cache filling to its cap: RSS rises for the first five minutes past the warm-up, then holds
    levelling = [_sample(30 * n, 100 + 5 * min(n, 10) + (n % 2) * 0.1) for n in range(1, 21)]
    figure = soak_figure(levelling, plan, 60_000, 600, 0)
    whole, half = figure.data["trends"]["worker_rss_mb"], figure.data["trends_second_half"]["worker_rss_mb"]
    assert not whole["flat"] and half["flat"] and half["samples"] == 11
    row = next(row.measure for row in figure.rows if row.measure.startswith("worker RSS"))
    assert "not flat (" in row and "; second half flat (" in row
    # the target stays the whole run's
    assert figure.target is not None and not figure.target.met
    leaking = soak_figure([_sample(30 * n, 100 + 10 * n) for n in range(1, 21)], plan, 60_000, 600, 0)
    assert not leaking.data["trends_second_half"]["worker_rss_mb"]["flat"]
