"""The alert rules and the Grafana dashboard name only series turnstream exports.

The exported names are read from the code: every prometheus_client metric turnstream defines (the worker's in
turnstream/metrics.py, the API's in turnstream/serve/metrics.py), with the suffixes its type adds to the series.
promtool and Grafana would accept a misspelt series and show nothing; this test does not.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import yaml

ROOT = Path(__file__).parents[2]
RULES = ROOT / "deploy" / "prometheus" / "turnstream-rules.yaml"
DASHBOARD = ROOT / "deploy" / "grafana" / "turnstream.json"
DEFINITION = re.compile(r"\b(Counter|Gauge|Histogram|Summary)\(\s*\"(turnstream_\w+)\"")
SERIES = re.compile(r"\bturnstream_\w+")


def exported_series() -> dict[str, str]:
    """Every series name turnstream's code exports, with the metric type that makes it."""
    series: dict[str, str] = {}
    for path in (ROOT / "turnstream").rglob("*.py"):
        for kind, name in DEFINITION.findall(path.read_text(encoding="utf-8")):
            if kind == "Counter":
                names = [name if name.endswith("_total") else f"{name}_total"]
            elif kind == "Histogram":
                names = [f"{name}_bucket", f"{name}_sum", f"{name}_count"]
            elif kind == "Summary":
                names = [name, f"{name}_sum", f"{name}_count"]
            else:
                names = [name]
            series.update(dict.fromkeys(names, kind))
    return series


def named_series(text: str) -> set[str]:
    return set(SERIES.findall(text))


def rule_expressions() -> list[tuple[str, str]]:
    groups = yaml.safe_load(RULES.read_text())["groups"]
    return [(rule.get("alert") or rule["record"], rule["expr"]) for group in groups for rule in group["rules"]]


def dashboard_queries() -> list[tuple[str, str]]:
    board = json.loads(DASHBOARD.read_text())
    queries = [(panel["title"], target["expr"]) for panel in board["panels"] for target in panel["targets"]]
    for variable in board["templating"]["list"]:
        if variable["type"] == "query":
            query = variable["query"]
            queries.append((f"${variable['name']}", query["query"] if isinstance(query, dict) else query))
    return queries


def test_the_code_defines_the_series_the_kit_relies_on() -> None:
    series = exported_series()
    # the scan finds the worker's and the API's metrics, in their exported form
    assert series["turnstream_consumer_lag"] == "Gauge"
    assert series["turnstream_dead_letters_total"] == "Counter"
    assert series["turnstream_stage_seconds_bucket"] == "Histogram"
    assert series["turnstream_serve_replies_total"] == "Counter"
    assert "turnstream_dead_letters_total_total" not in series


def test_every_series_in_the_alert_rules_is_exported() -> None:
    series = exported_series()
    rules = rule_expressions()
    assert rules
    for name, expr in rules:
        named = named_series(expr)
        assert named, f"{name} names no turnstream series"
        assert named <= series.keys(), f"{name}: not series turnstream exports: {sorted(named - series.keys())}"


def test_the_alerts_cover_the_operational_risks() -> None:
    named = set().union(*(named_series(expr) for _, expr in rule_expressions()))
    for risk in (
        "turnstream_consumer_lag",
        "turnstream_dead_letters_total",
        "turnstream_redis_write_retries_total",
        "turnstream_contexts_resynced_total",
        "turnstream_journal_replayed_total",
        "turnstream_stage_seconds_bucket",
        "turnstream_embedding_lag_seconds_bucket",
    ):
        assert risk in named, risk


def test_every_alert_has_a_severity_and_a_summary() -> None:
    groups = yaml.safe_load(RULES.read_text())["groups"]
    for rule in (rule for group in groups for rule in group["rules"]):
        assert rule["labels"]["severity"] in ("info", "warning", "critical"), rule["alert"]
        assert rule["annotations"]["summary"].startswith("turnstream"), rule["alert"]


def test_every_alert_is_fired_by_a_promtool_test() -> None:
    tests = yaml.safe_load(RULES.with_name("turnstream-rules.test.yaml").read_text())
    fired = {
        alert["alertname"]
        for case in tests["tests"]
        for alert in case.get("alert_rule_test", [])
        if alert.get("exp_alerts")
    }
    assert {name for name, _ in rule_expressions()} <= fired


def test_the_dashboard_parses_and_names_only_exported_series() -> None:
    series = exported_series()
    board = json.loads(DASHBOARD.read_text())
    assert board["uid"] and board["title"] and board["panels"]
    assert len({panel["id"] for panel in board["panels"]}) == len(board["panels"])
    for title, expr in dashboard_queries():
        named = named_series(expr)
        assert named, f"{title} names no turnstream series"
        assert named <= series.keys(), f"{title}: not series turnstream exports: {sorted(named - series.keys())}"


def test_the_dashboard_shows_what_the_alerts_watch() -> None:
    shown = set().union(*(named_series(expr) for _, expr in dashboard_queries()))
    alerted = set().union(*(named_series(expr) for _, expr in rule_expressions()))
    assert alerted <= shown, sorted(alerted - shown)
