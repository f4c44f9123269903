"""The worker's /metrics: consumer lag per partition, rebalances, partitions and sessions held, Redis write
retries and build info, scraped from a running worker while Redis is there, gone and back."""

from __future__ import annotations

import faust

from tests.support.conversations import turns_for
from tests.support.metrics import Samples, scrape_until
from tests.support.pipeline import produce, wait_for_versions
from tests.support.worker import running_worker
from turnstream import __version__
from turnstream.client import ContextClient
from turnstream.kafka.admin import ensure_topics
from turnstream.lifecycle.gauges import SAMPLE_SECONDS
from turnstream.settings import Settings
from turnstream.stack.services import EmbeddedStack, free_port

SESSIONS = 6
TURNS = 5


def value(samples: Samples, name: str) -> float | None:
    found = samples.get(name)
    return found[0][1] if found else None


def lags(samples: Samples, topic: str) -> dict[int, float]:
    return {
        int(labels["partition"]): v
        for labels, v in samples.get("turnstream_consumer_lag", [])
        if labels["topic"] == topic
    }


async def test_metrics_follow_lag_sessions_and_redis_retries(settings: Settings) -> None:
    with EmbeddedStack(kafka=False) as private:  # a Redis of this test's own, to stop and start again
        redis = private.services[0]
        settings = settings.model_copy(
            update={"redis_url": private.redis_url, "metrics_port": free_port(), "turn_partitions": 4}
        )
        port, topic = settings.metrics_port, settings.turns_topic
        assert port is not None
        sessions = {f"metrics-{i}": turns_for(f"metrics-{i}", seed=i, count=TURNS) for i in range(SESSIONS)}
        await ensure_topics(settings)
        with running_worker(settings) as worker:
            await produce(settings, [turn for turns in sessions.values() for turn in turns])
            async with ContextClient.from_settings(settings) as client:
                await wait_for_versions(client, {sid: TURNS for sid in sessions}, worker)

            drained = await scrape_until(
                port,
                worker,
                lambda s: (
                    set(lags(s, topic)) == set(range(4))
                    and not any(lags(s, topic).values())
                    and value(s, "turnstream_sessions_held") == SESSIONS
                ),
                timeout=SAMPLE_SECONDS * 6,
            )
            assert value(drained, "turnstream_rebalances_total") >= 1
            # the turns topic's partitions (no LLM: no summaries topic), changelogs and the leader topic not counted
            assert value(drained, "turnstream_assigned_partitions") == len(drained["turnstream_consumer_lag"]) == 4
            assert value(drained, "turnstream_redis_write_retries_total") == 0
            ((labels, info),) = drained["turnstream_build_info"]
            assert info == 1 and labels["version"] == __version__ and labels["faust"] == faust.__version__
            assert labels["python"].count(".") == 2

            redis.stop(grace=5)  # Redis goes away: the next batch waits, retrying its write
            late = "metrics-0"
            extra = turns_for(late, seed=0, count=TURNS + 2)[TURNS:]
            await produce(settings, extra)
            stuck = await scrape_until(
                port,
                worker,
                lambda s: (
                    value(s, "turnstream_redis_write_retries_total") >= 2 and sum(lags(s, topic).values()) == len(extra)
                ),
                timeout=SAMPLE_SECONDS * 6,
            )
            assert value(stuck, "turnstream_sessions_held") == SESSIONS

            private.restart(redis)
            async with ContextClient.from_settings(settings) as client:
                await wait_for_versions(client, {late: TURNS + len(extra)}, worker)
            await scrape_until(port, worker, lambda s: not any(lags(s, topic).values()), timeout=SAMPLE_SECONDS * 6)


async def test_partitions_moved_to_a_joining_worker_leave_the_first_ones_series(settings: Settings) -> None:
    settings = settings.model_copy(update={"turn_partitions": 4, "broker_session_timeout": 6.0})
    topic, everything = settings.turns_topic, set(range(4))
    sessions = {f"moved-{i}": turns_for(f"moved-{i}", seed=i, count=3) for i in range(8)}
    await ensure_topics(settings)
    first = settings.model_copy(update={"metrics_port": free_port()})
    second = settings.model_copy(update={"metrics_port": free_port()})
    with running_worker(first, "first") as one:
        await produce(settings, [turn for turns in sessions.values() for turn in turns])
        async with ContextClient.from_settings(settings) as client:
            await wait_for_versions(client, {sid: 3 for sid in sessions}, one)
        await scrape_until(
            first.metrics_port,
            one,
            lambda s: set(lags(s, topic)) == everything and value(s, "turnstream_sessions_held") == len(sessions),
            timeout=SAMPLE_SECONDS * 6,
        )

        with running_worker(second, "second") as two:

            def split(s: Samples) -> bool:
                return 0 < len(lags(s, topic)) < 4 and value(s, "turnstream_rebalances_total") >= 2

            mine = await scrape_until(first.metrics_port, one, split, timeout=90)
            theirs = await scrape_until(second.metrics_port, two, lambda s: 0 < len(lags(s, topic)) < 4, timeout=90)
            # each partition's lag is reported by the one worker holding it: the first dropped the moved ones
            assert set(lags(mine, topic)) | set(lags(theirs, topic)) == everything
            assert not set(lags(mine, topic)) & set(lags(theirs, topic))
            assert value(mine, "turnstream_assigned_partitions") == len(lags(mine, topic))
            assert value(theirs, "turnstream_assigned_partitions") == len(lags(theirs, topic))
            held_one = value(mine, "turnstream_sessions_held")
            assert held_one is not None and 0 < held_one < len(sessions)
            await scrape_until(
                second.metrics_port,
                two,
                lambda s: value(s, "turnstream_sessions_held") == len(sessions) - held_one,
                timeout=SAMPLE_SECONDS * 6,
            )
