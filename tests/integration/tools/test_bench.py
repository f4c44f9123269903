"""`turnstream bench --quick --broker both` end to end on its own embedded stacks, Tansu then Apache Kafka:
consistent figures, each naming its broker, no process left behind (the JVM included)."""

from __future__ import annotations

import math
import os
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

FIGURES = {
    "drain",
    "freshness",
    "reads",
    "recall",
    "archive",
    "long_reads",
    "prompt_size",
    "retention",
    "append_cost",
    "story",
    "agent_values",
    "churn",
}
SPEED_FIGURES = {"drain", "freshness", "reads", "archive", "long_reads", "append_cost"}
BROKER_FIGURES = {"drain", "freshness"}
"""Measured on each broker; the others once, on the first (Tansu), or offline."""
OFFLINE_FIGURES = {"prompt_size", "retention", "append_cost", "story", "agent_values"}
CHURN_SESSIONS = 200


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


@pytest.mark.kafka
@pytest.mark.timeout(480)  # above the bench's own 420 s, so a slow run fails on that and its children are stopped
def test_quick_bench_on_both_brokers_reports_every_figure_consistently_and_leaves_no_process(tmp_path: Path) -> None:
    path = tmp_path / "bench.json"
    # no configured services: the bench starts (and must stop) its own embedded brokers and Redis
    env = {k: v for k, v in os.environ.items() if k not in ("TURNSTREAM_KAFKA_URL", "TURNSTREAM_REDIS_URL")}
    # 200 churning sessions, not --quick's 2,000: the churn figure's rows and pids are what is checked, and its two
    # workers then spend their time starting, not churning (the RSS target is the bench's to judge, not the test's)
    command = ["bench", "--quick", "--broker", "both", "--sessions", str(CHURN_SESSIONS), "--json", str(path)]
    result = subprocess.run(
        [sys.executable, "-m", "turnstream", *command],
        capture_output=True,
        text=True,
        env=env,
        timeout=420,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    document = orjson.loads(path.read_bytes())
    figures = document["figures"]
    assert set(figures) == FIGURES | {f"{key}@kafka" for key in BROKER_FIGURES}
    assert document["meta"]["brokers"] == ["tansu", "kafka"]
    for key, figure in figures.items():
        name, _, broker = key.partition("@")
        assert figure["broker"] == (broker or (None if name in OFFLINE_FIGURES else "tansu")), key
        assert figure["title"] in result.stdout
        assert figure["rows"], key
        for row in figure["rows"]:
            assert math.isfinite(row["a"]) and math.isfinite(row["b"]), (key, row)
            if row["b"] == 0:
                assert row["ratio"] is None, (key, row)
            else:
                assert row["ratio"] == pytest.approx(row["a"] / row["b"], rel=1e-12), (key, row)
            if name in SPEED_FIGURES:
                assert row["a"] > 0 and row["b"] > 0, (key, row)
        assert figure["target"] is None or isinstance(figure["target"]["met"], bool), key

    sizes = figures["prompt_size"]
    token_rows = [row for row in sizes["rows"] if row["unit"] == "tokens"]
    byte_rows = [row for row in sizes["rows"] if row["unit"] == "bytes (JSON)"]
    assert [row["measure"] for row in token_rows] == [row["measure"] for row in byte_rows]
    for tokens, size, turns in zip(token_rows, byte_rows, (50, 200, 1000, 5000)):
        assert f"{turns:,}" in tokens["measure"]
        if turns >= 200:
            assert tokens["a"] <= tokens["b"] and size["a"] <= size["b"], (tokens, size)
        assert tokens["a"] <= sizes["data"]["budget_tokens"]
    for row in figures["retention"]["rows"]:
        assert 0 <= row["a"] <= 100 and 0 <= row["b"] <= 100
    # the shipped chats: every planted detail is in build_prompt's prompt, none in the newest tail
    recall = {row["measure"]: row for row in figures["recall"]["rows"]}
    assert (
        recall["generated en at 4k vs newest tail"]["a"] == 100
        and recall["generated zh at 4k vs newest tail"]["a"] == 100
    )
    assert recall["generated en at 4k vs newest tail"]["b"] < 50
    # --sessions reaches the churn figure: RSS read after one session, a tenth of them and all
    churn = figures["churn"]
    assert churn["data"]["sessions"] == CHURN_SESSIONS and len(churn["data"]["rss_mb"]["expiry"]) == 3
    assert churn["rows"][-1]["measure"] == f"worker RSS after {CHURN_SESSIONS:,} sessions"

    # pinned and unpinned side by side where there are two CPUs or more, unpinned only on one
    placements = ["pinned", "unpinned"] if document["meta"]["machine"]["nproc"] >= 2 else ["unpinned only"]
    # where a turn's time goes, at one event a batch and at 256, on each broker, in each placement: every stage
    # measured, the whole is their sum and the rest; each side's process spent CPU
    assert "Where a turn's time goes" in result.stdout and "in the freshness rounds" in result.stdout
    for broker in ("", "@kafka"):
        drain = figures[f"drain{broker}"]
        assert [row["measure"].rpartition(", ")[2] for row in drain["rows"]] == placements * 4
        sizes = drain["data"]["batch_sizes"]
        assert set(sizes) == {"1", "256"}
        for size, by_placement in sizes.items():
            assert list(by_placement) == placements
            for placement, measured in by_placement.items():
                shares = measured["stages_us_per_turn"]
                assert all(
                    shares[stage] > 0
                    for stage in ("ingest", "compaction", "redis_write", "journal_write", "table_write", "wall")
                ), (broker, size, placement, shares)
                parts = sum(
                    shares[stage]
                    for stage in ("ingest", "compaction", "redis_write", "journal_write", "table_write", "rest")
                )
                assert parts == pytest.approx(shares["wall"], rel=1e-3), (broker, size, shares)
                assert measured["cpu_us_per_turn"]["pipeline"] > measured["cpu_us_per_turn"]["count"] > 0, (
                    broker,
                    size,
                )
                assert (
                    shares["events_per_batch"] == pytest.approx(1.0)
                    if size == "1"
                    else shares["events_per_batch"] > 1.0
                )
        # and in the freshness rounds: the worker stepped each turn before it was readable, in less time than that
        fresh = figures[f"freshness{broker}"]
        assert list(fresh["data"]["placements"]) == placements
        for placement, measured in fresh["data"]["placements"].items():
            spent = measured["worker_ms"]
            p50 = next(row["a"] for row in fresh["rows"] if row["measure"] == f"freshness p50, {placement}")
            assert all(
                spent[stage] > 0
                for stage in ("broker_wait", "compaction", "redis_write", "journal_write", "table_write")
            ), (broker, placement, spent)
            assert spent["broker_wait"] < 5 * p50 and spent["events_per_batch"] >= 1.0, (broker, spent)
            assert measured["cpu_us_per_turn"]["pipeline"] > 0 and measured["cpu_us_per_turn"]["set"] > 0, (
                broker,
                placement,
            )

    pids = document["meta"]["pids"]
    assert {
        "kafka",
        "redis",
        "worker",
        "worker-single",
        "passthrough-count",
        "passthrough-set",
        "worker-churn-expiry",
        "worker-churn-kept",
    } <= set(pids)
    # the second stack: Apache Kafka's JVM, its Redis and the consumers the broker-bound figures feed
    assert {
        f"{name}@kafka"
        for name in ("kafka", "redis", "worker", "worker-single", "passthrough-count", "passthrough-set")
    } == {name for name in pids if name.endswith("@kafka")}
    assert not [name for name, pid in pids.items() if _alive(pid)]


def test_agents_through_the_stream_reads_build_prompt_at_each_call_within_its_budget(tmp_path: Path) -> None:
    """Figures 14 and 15: the offline workers, and beside them workers whose LLM path asks the stand-in model."""
    path = tmp_path / "agents.json"
    env = {k: v for k, v in os.environ.items() if k not in ("TURNSTREAM_KAFKA_URL", "TURNSTREAM_REDIS_URL")}
    argv = ["bench", "--agents-stream", "--llm-stand-in", "--quick", "--json", str(path)]
    result = subprocess.run(
        [sys.executable, "-m", "turnstream", *argv], capture_output=True, text=True, env=env, timeout=300
    )
    assert result.returncode == 0, result.stderr[-3000:]
    figures = orjson.loads(path.read_bytes())["figures"]
    assert set(figures) == {"agent_stream", "agent_stream_llm"}
    figure, with_model = figures["agent_stream"], figures["agent_stream_llm"]
    assert figure["broker"] == with_model["broker"] == "tansu"
    # the model answered each summary request with a merge and an extraction, and every extraction invented a
    # reference the workers kept out of every prompt
    answers = with_model["data"]["model_answers"]
    assert answers["summary"] > 0 and answers["extraction"] == with_model["data"]["references_invented"] > 0
    assert with_model["rows"][-1]["measure"] == "prompts holding an invented reference"
    assert with_model["rows"][-1]["a"] == 0
    for prompt, by_domain in with_model["data"]["budgets"].items():
        sides = by_domain["all"]["sides"]
        assert sides["build_prompt offline"] == figure["data"]["budgets"][prompt]["all"]["sides"]["build_prompt"]
        assert sides["build_prompt with the model"]["needed"] == sides["build_prompt offline"]["needed"] > 0
    assert "14 Agent values through build_prompt, per domain" in result.stdout
    budgets = figure["data"]["budgets"]
    assert set(budgets) == {"4000", "6000"}
    assert figure["data"]["workers"]["4000"] == {"budget_tokens": 2666, "recall_budget_tokens": 2000}
    for by_domain in budgets.values():
        total = by_domain["all"]
        assert total["points"] > 20
        # a prompt over its budget is a broken invariant, and names where it was read
        assert (total["most_over_budget"] > 0) == ("budget" in total["invariants_broken"]), total
        assert total["invariants_clean"] <= total["points"]
        for side in ("build_prompt", "anchors + tail"):
            kept = total["sides"][side]
            assert 0 < kept["old_kept"] <= kept["old"] < kept["needed"], (side, kept)
