"""deploy/ cannot run here (no Docker engine, no cluster): its files are parsed and their safety properties asserted."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
import yaml

from turnstream.settings import Settings

DEPLOY = Path(__file__).parents[2] / "deploy"
SECRET_NAME = re.compile(r"PASSWORD|SECRET|API_KEY", re.IGNORECASE)
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


@pytest.fixture(scope="module")
def k8s() -> dict[str, dict]:
    docs = [doc for doc in yaml.safe_load_all((DEPLOY / "k8s" / "worker.yaml").read_text()) if doc]
    return {doc["kind"]: doc for doc in docs}


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


# --- Kubernetes -------------------------------------------------------------------------------------------


def test_manifest_has_every_part(k8s: dict[str, dict]) -> None:
    assert set(k8s) == {"ConfigMap", "Secret", "Deployment", "PodDisruptionBudget", "Service"}


def test_no_secret_in_the_configmap(k8s: dict[str, dict]) -> None:
    data = k8s["ConfigMap"]["data"]
    assert_known_settings(data)
    assert not [key for key in data if SECRET_NAME.search(key) or key == "TURNSTREAM_REDIS_URL"]
    assert not [value for value in data.values() if re.search(r"://[^/@]*:[^/@]*@", str(value))]
    assert data["TURNSTREAM_EMBEDDED"] == "never"
    # SASL needs user and password: they come from the Secret, so the ConfigMap alone does not validate
    assert data["TURNSTREAM_KAFKA_SECURITY_PROTOCOL"] in ("SASL_SSL", "SSL")


def test_the_secret_holds_the_passwords_and_the_redis_url(k8s: dict[str, dict]) -> None:
    secret = k8s["Secret"]["stringData"]
    assert {"TURNSTREAM_REDIS_URL", "TURNSTREAM_REDIS_PASSWORD", "TURNSTREAM_KAFKA_SASL_PASSWORD"} <= set(secret)
    assert_known_settings(secret)
    config = {**k8s["ConfigMap"]["data"], **secret}
    settings = Settings(**{k.removeprefix("TURNSTREAM_").lower(): v for k, v in config.items()})
    assert settings.kafka_security_protocol == "SASL_SSL" and settings.replication_factor == 3


def _container(k8s: dict[str, dict]) -> dict:
    (container,) = k8s["Deployment"]["spec"]["template"]["spec"]["containers"]
    return container


def test_worker_reads_both_configmap_and_secret(k8s: dict[str, dict]) -> None:
    sources = _container(k8s)["envFrom"]
    assert {"configMapRef": {"name": k8s["ConfigMap"]["metadata"]["name"]}} in sources
    assert {"secretRef": {"name": k8s["Secret"]["metadata"]["name"]}} in sources
    assert_known_settings(item["name"] for item in _container(k8s)["env"])


def test_probes_hit_livez_and_readyz_on_the_web_port(k8s: dict[str, dict]) -> None:
    container = _container(k8s)
    ports = {port["name"]: port["containerPort"] for port in container["ports"]}
    env = {item["name"]: item.get("value") for item in container["env"]}
    assert ports["faust-web"] == int(env["TURNSTREAM_WEB_PORT"]) and env["TURNSTREAM_WEB_BIND"] == "0.0.0.0"
    assert ports["metrics"] == int(env["TURNSTREAM_METRICS_PORT"])
    assert container["livenessProbe"]["httpGet"] == {"path": "/livez", "port": "faust-web"}
    assert container["readinessProbe"]["httpGet"] == {"path": "/readyz", "port": "faust-web"}
    startup = container["startupProbe"]
    assert startup["periodSeconds"] * startup["failureThreshold"] > float(
        k8s["ConfigMap"]["data"]["TURNSTREAM_STARTUP_TIMEOUT_SECONDS"]
    )


def test_pod_and_container_security_context(k8s: dict[str, dict]) -> None:
    pod = k8s["Deployment"]["spec"]["template"]["spec"]
    assert pod["securityContext"]["runAsNonRoot"] is True and pod["securityContext"]["runAsUser"] > 0
    context = _container(k8s)["securityContext"]
    assert context["readOnlyRootFilesystem"] is True
    assert context["allowPrivilegeEscalation"] is False
    assert context["capabilities"]["drop"] == ["ALL"]
    # a read-only root needs somewhere to write: Faust's data directory (the image's WORKDIR) and /tmp
    mounts = {mount["mountPath"] for mount in _container(k8s)["volumeMounts"]}
    workdirs = [args for instruction, args in dockerfile() if instruction == "WORKDIR"]
    assert {workdirs[-1], "/tmp"} <= mounts


def test_pdb_and_metrics_service_select_the_workers(k8s: dict[str, dict]) -> None:
    labels = k8s["Deployment"]["spec"]["template"]["metadata"]["labels"]
    pdb = k8s["PodDisruptionBudget"]["spec"]
    assert pdb["selector"]["matchLabels"].items() <= labels.items()
    assert pdb.get("maxUnavailable") == 1 or pdb.get("minAvailable")
    service = k8s["Service"]["spec"]
    assert service["selector"].items() <= labels.items()
    assert [port["targetPort"] for port in service["ports"]] == ["metrics"]


def test_replicas_do_not_exceed_partitions_and_the_reason_is_written_down(k8s: dict[str, dict]) -> None:
    assert k8s["Deployment"]["spec"]["replicas"] <= int(k8s["ConfigMap"]["data"]["TURNSTREAM_TURN_PARTITIONS"])
    text = (DEPLOY / "k8s" / "worker.yaml").read_text()
    assert re.search(r"#.*Replicas vs partitions", text)
