"""deploy/ cannot run here (no Docker engine, no cluster): its files are parsed and their safety properties asserted.

The Kubernetes side is the Helm chart (deploy/helm/turnstream): tests/checks/test_deploy_kit.py renders it with the
real helm and holds the manifests to the same properties (no secret in the ConfigMap, probes, a non-root read-only
pod, PodDisruptionBudgets, no more workers than partitions)."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
import yaml

from turnstream.settings import Settings

DEPLOY = Path(__file__).parents[2] / "deploy"
KNOWN = {f"TURNSTREAM_{name.upper()}" for name in Settings.model_fields} | {"OPENAI_BASE_URL", "OPENAI_API_KEY"}


def dockerfile() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) with continuation lines joined and comments dropped."""
    text = re.sub(r"\\\n\s*", " ", (DEPLOY / "Dockerfile").read_text())
    lines = [line.strip() for line in text.splitlines() if line.strip() and not line.strip().startswith("#")]
    return [(line.split(None, 1)[0].upper(), line.split(None, 1)[1]) for line in lines]


def dockerfile_env() -> dict[str, str]:
    env = {}
    for instruction, args in dockerfile():
        if instruction == "ENV":
            env.update(item.split("=", 1) for item in shlex.split(args))
    return env


@pytest.fixture(scope="module")
def compose() -> dict:
    return yaml.safe_load((DEPLOY / "compose.yaml").read_text())


def assert_known_settings(names: object) -> None:
    unknown = {name for name in names if name.startswith(("TURNSTREAM_", "OPENAI_")) and name not in KNOWN}
    assert not unknown, f"not settings turnstream reads: {unknown}"


# --- Dockerfile -------------------------------------------------------------------------------------------


def test_image_runs_as_a_numeric_non_root_user() -> None:
    users = [args for instruction, args in dockerfile() if instruction == "USER"]
    assert users, "no USER: the worker would run as root"
    uid = users[-1].split(":")[0]
    assert uid.isdigit() and int(uid) > 0  # numeric, so Kubernetes runAsNonRoot can verify it


def test_image_forbids_the_embedded_fallback_and_listens_outside() -> None:
    env = dockerfile_env()
    assert env["TURNSTREAM_EMBEDDED"] == "never"
    assert env["TURNSTREAM_WEB_BIND"] == "0.0.0.0" and env["TURNSTREAM_WEB_PORT"] == "6066"
    assert_known_settings(env)
    Settings(**{k.removeprefix("TURNSTREAM_").lower(): v for k, v in env.items() if k.startswith("TURNSTREAM_")})


def test_image_installs_the_worker_extra() -> None:
    installs = [args for instruction, args in dockerfile() if instruction == "RUN" and "pip install" in args]
    assert len(installs) == 1 and '".[worker]"' in installs[0]


def test_image_has_a_healthcheck_on_livez() -> None:
    checks = [args for instruction, args in dockerfile() if instruction == "HEALTHCHECK"]
    assert len(checks) == 1 and "/livez" in checks[0] and "--start-period" in checks[0]
    assert dockerfile()[-1][0] == "CMD" and "worker" in dockerfile()[-1][1]


# --- compose ----------------------------------------------------------------------------------------------


def test_compose_services_have_health_checks_and_restart_policies(compose: dict) -> None:
    services = compose["services"]
    for name in ("kafka", "redis"):
        assert services[name]["healthcheck"]["test"], name
    for name, service in services.items():
        assert service.get("restart") in ("always", "unless-stopped", "on-failure"), name


def test_workers_wait_for_healthy_kafka_and_redis(compose: dict) -> None:
    worker = compose["services"]["worker"]
    assert worker["depends_on"] == {
        "kafka": {"condition": "service_healthy"},
        "redis": {"condition": "service_healthy"},
    }
    env = worker["environment"]
    assert_known_settings(env)
    assert env["TURNSTREAM_EMBEDDED"] == "never"
    assert env["TURNSTREAM_KAFKA_URL"] == "kafka://kafka:9092" and env["TURNSTREAM_REDIS_URL"].startswith(
        "redis://redis:6379"
    )
    assert "@" not in env["TURNSTREAM_REDIS_URL"]  # the password travels in TURNSTREAM_REDIS_PASSWORD


def test_kafka_kraft_single_node_configuration_is_complete(compose: dict) -> None:
    env = {k: str(v) for k, v in compose["services"]["kafka"]["environment"].items()}
    for key in (
        "CLUSTER_ID",
        "KAFKA_NODE_ID",
        "KAFKA_PROCESS_ROLES",
        "KAFKA_LISTENERS",
        "KAFKA_ADVERTISED_LISTENERS",
        "KAFKA_LISTENER_SECURITY_PROTOCOL_MAP",
        "KAFKA_CONTROLLER_LISTENER_NAMES",
        "KAFKA_CONTROLLER_QUORUM_VOTERS",
        "KAFKA_INTER_BROKER_LISTENER_NAME",
        "KAFKA_LOG_DIRS",
        "KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR",
        "KAFKA_TRANSACTION_STATE_LOG_REPLICATION_FACTOR",
        "KAFKA_TRANSACTION_STATE_LOG_MIN_ISR",
    ):
        assert env.get(key), key
    assert set(env["KAFKA_PROCESS_ROLES"].split(",")) == {"broker", "controller"}
    listeners = {item.split("://")[0] for item in env["KAFKA_LISTENERS"].split(",")}
    protocols = dict(item.split(":") for item in env["KAFKA_LISTENER_SECURITY_PROTOCOL_MAP"].split(","))
    assert listeners <= set(protocols)
    assert env["KAFKA_CONTROLLER_LISTENER_NAMES"] in listeners and env["KAFKA_INTER_BROKER_LISTENER_NAME"] in listeners
    voter_id, voter = env["KAFKA_CONTROLLER_QUORUM_VOTERS"].split("@")
    assert voter_id == env["KAFKA_NODE_ID"] and voter.startswith("kafka:")
    assert "PLAINTEXT://kafka:9092" in env["KAFKA_ADVERTISED_LISTENERS"]
    assert len(env["CLUSTER_ID"]) == 22  # a base64 UUID, as kafka-storage.sh random-uuid prints


def test_compose_redis_requires_a_password(compose: dict) -> None:
    redis = compose["services"]["redis"]
    assert "--requirepass" in " ".join(redis["command"])
    assert "REDISCLI_AUTH" in " ".join(redis["healthcheck"]["test"])
    assert all(port.startswith("127.0.0.1:") for port in redis.get("ports", []))
