"""A shadow's pure parts: its settings, the topics `shadow drop` may delete, where a new shadow starts, its progress
line."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from turnstream.client import TurnProducer
from turnstream.client.errors import ShadowSettingsError
from turnstream.logs import LogFormat
from turnstream.operations.shadow import (
    PartitionLag,
    ShadowError,
    parse_overrides,
    shadow_settings,
    shadow_topics,
    start_offsets,
)
from turnstream.operations.shadow_progress import LOG_SECONDS, Look, ProgressDisplay, progress_line
from turnstream.settings import Settings

pytestmark = pytest.mark.unit


@pytest.fixture
def live() -> Settings:
    return Settings(
        kafka_url="kafka://broker:9092",
        redis_url="redis://redis:6379/0",
        topic_prefix="prod",
        web_port=6066,
        metrics_port=9100,
        group_instance_id="worker-0",
        TURNSTREAM_OPENAI_BASE_URL="http://llm:8000/v1",
    )


def test_a_shadow_reads_the_live_turns_and_names_everything_else_after_itself(live: Settings) -> None:
    shadow = shadow_settings(live, "prod-emb", parse_overrides(["embeddings=local", "TURNSTREAM_BUDGET_TOKENS=2000"]))
    assert shadow.turns_topic == "prod.turns" and shadow.is_shadow and not live.is_shadow
    assert (shadow.memory_topic, shadow.summaries_topic, shadow.compaction_topic, shadow.dlq_topic) == (
        "prod-emb.memory",
        "prod-emb.summaries",
        "prod-emb.compaction",
        "prod-emb.turns.dlq",
    )
    assert (shadow.embeddings, shadow.budget_tokens, shadow.kafka_url) == ("local", 2000, live.kafka_url)
    # beside the live worker on one host: none of its fixed ports, nor its static membership
    assert (shadow.web_port, shadow.metrics_port, shadow.group_instance_id) == (0, None, None)


def test_the_llm_is_off_unless_asked_and_then_capped(live: Settings) -> None:
    assert not shadow_settings(live, "s").llm_enabled
    asked = shadow_settings(live, "s", llm=True, llm_max_calls=50)
    assert asked.llm_enabled and asked.llm_max_calls == 50


def test_a_rate_caps_the_batch_at_a_seconds_worth(live: Settings) -> None:
    shadow = shadow_settings(live, "s", rate=20)
    assert (shadow.max_turns_per_second, shadow.batch_max_events) == (20, 20)
    assert shadow_settings(live, "s", rate=0.5).batch_max_events == 1
    assert shadow_settings(live, "s").batch_max_events == live.batch_max_events


@pytest.mark.parametrize(
    ("pairs", "complaint"),
    [
        (["budget_tokens"], "use KEY=VALUE"),
        (["no_such_setting=1"], "use KEY=VALUE"),
        (["topic_prefix=x"], "give topic_prefix"),
        (["TURNSTREAM_TURNS_FROM=x"], "give turns_from"),
    ],
)
def test_a_bad_override_is_one_line(pairs: list[str], complaint: str) -> None:
    with pytest.raises(ShadowError, match=complaint):
        parse_overrides(pairs)


def test_a_bad_value_and_the_live_name_are_refused_in_one_line(live: Settings) -> None:
    with pytest.raises(ShadowError, match="budget_tokens") as bad:
        shadow_settings(live, "s", {"budget_tokens": "lots"})
    assert "\n" not in str(bad.value)
    with pytest.raises(ShadowError, match="live prefix"):
        shadow_settings(live, "prod")


def test_drop_deletes_the_shadows_topics_and_nothing_of_the_live_worker(live: Settings) -> None:
    shadow = shadow_settings(live, "prod-x")
    existing = [
        "prod.turns",
        "prod.memory",
        "prod-worker-sessions-changelog",
        "prod-x.memory",
        "prod-x.summaries",
        "prod-x.compaction",
        "prod-x.turns.dlq",
        "prod-x-worker-sessions-changelog",
        "prod-x-worker-__assignor-__leader",
        "prod-xy.memory",  # another prefix that begins like the shadow's
        "prod-xy-worker-sessions-changelog",
    ]
    assert shadow_topics(shadow, live, existing) == [
        "prod-x-worker-__assignor-__leader",
        "prod-x-worker-sessions-changelog",
        "prod-x.compaction",
        "prod-x.memory",
        "prod-x.summaries",
        "prod-x.turns.dlq",
    ]


def test_a_live_prefix_that_begins_like_the_shadows_app_id_keeps_its_topics() -> None:
    live = Settings(topic_prefix="a-worker-b")
    shadow = shadow_settings(live, "a")
    assert shadow_topics(shadow, live, ["a-worker-b.turns", "a-worker-b-worker-sessions-changelog", "a.memory"]) == [
        "a.memory"
    ]


def test_a_new_shadow_starts_inside_what_each_partition_holds() -> None:
    starts, ends = {0: 5, 1: 0, 2: 0}, {0: 50, 1: 10, 2: 7}
    assert start_offsets({0: 0, 1: 3, 2: 99}, starts, ends) == {0: 5, 1: 3, 2: 7}
    assert start_offsets({0: None, 1: 4, 2: None}, starts, ends) == {0: 50, 1: 4, 2: 7}  # no turn since: the end


def test_lag_counts_from_zero_without_a_commit() -> None:
    assert PartitionLag(0, None, 12).lag == 12 and PartitionLag(1, 10, 12).lag == 2


def test_the_progress_line_says_consumed_lag_rate_and_llm_calls() -> None:
    before = Look(10.0, 100, 1000, {})
    now = Look(12.0, 180, 1000, {"ok": 3, "failed": 1, "capped": 2})
    assert progress_line("s", now, before, 3) == (
        "shadow s: consumed 180/1000, lag 820, 40.0 turns/s, LLM 3 ok, 1 failed, cap 3, 2 past it"
    )
    assert (
        progress_line("s", before, None, None)
        == "shadow s: consumed 100/1000, lag 900, 0.0 turns/s, LLM 0 ok, 0 failed"
    )


@pytest.mark.parametrize(("fmt", "written"), [("text", "shadow s: …\n"), ("json", '{"message":"shadow s: …"}\n')])
def test_the_progress_goes_as_plain_or_json_lines_when_not_on_a_terminal(fmt: LogFormat, written: str) -> None:
    out = io.StringIO()
    display = ProgressDisplay(Console(file=out), fmt)
    assert display.interval == LOG_SECONDS
    display.show("shadow s: …")
    display.close()
    assert out.getvalue() == written


def test_a_producer_refuses_a_shadows_settings(live: Settings) -> None:
    with pytest.raises(ShadowSettingsError, match="never produces into the turns topic it reads \\(prod.turns\\)"):
        TurnProducer(shadow_settings(live, "prod-x"))
