"""The deployment kit passes the real tools: `helm lint`, `helm template | kubeconform` against the Kubernetes JSON
schemas (and the chart's own schemas of KEDA's ScaledObject and TriggerAuthentication), `promtool check rules` and
`promtool test rules`. The tools come from `make deploy-tools` (.tools/bin); a missing one fails, naming it.

The rendered manifests are also held to the properties the hand-written worker manifest had: no secret in the
ConfigMap, the settings valid for turnstream, probes on /livez and /readyz, a non-root read-only pod, a
PodDisruptionBudget and a metrics Service that select the workers, no more workers than partitions.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from turnstream.settings import Settings

ROOT = Path(__file__).parents[2]
TOOLS = ROOT / ".tools"
CHART = ROOT / "deploy" / "helm" / "turnstream"
CRD_SCHEMAS = ROOT / "deploy" / "helm" / "schemas"
RULES = ROOT / "deploy" / "prometheus" / "turnstream-rules.yaml"
RULE_TESTS = ROOT / "deploy" / "prometheus" / "turnstream-rules.test.yaml"
KUBERNETES_VERSION = "1.34.0"
"""The version whose schemas `make deploy-tools` unpacks (K8S_SCHEMAS_VERSION in the Makefile)."""
SECRET_NAME = re.compile(r"PASSWORD|SECRET|API_KEY|SERVE_TOKENS$|INSPECT_TOKEN$", re.IGNORECASE)

EVERYTHING_ON = [
    "--set",
    "worker.keda.enabled=true",
    "--set",
    "worker.staticMembership.enabled=true",
    "--set",
    "mcp.enabled=true",
    "--set",
    "inspect.enabled=true",
    "--set",
    "secrets.inspectToken.name=turnstream-inspect",
    "--set",
    "secrets.kafkaSasl.name=turnstream-kafka",
    "--set",
    "secrets.redis.name=turnstream-redis",
    "--set",
    "secrets.openai.name=turnstream-llm",
    "--set",
    "settings.TURNSTREAM_KAFKA_SECURITY_PROTOCOL=SASL_SSL",
    "--set",
    "settings.TURNSTREAM_KAFKA_SASL_MECHANISM=SCRAM-SHA-512",
    "--set",
    "settings.TURNSTREAM_EMBEDDINGS=local",
]
VALUE_SETS = {"defaults": [], "keda-static-membership-everything": EVERYTHING_ON}


def tool(name: str) -> Path:
    path = TOOLS / "bin" / name
    if not path.exists():
        pytest.fail(f"{name} is missing from {path.parent}: run `make deploy-tools` (make test-checks runs it)")
    return path


def run(*args: str | Path, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(arg) for arg in args], input=stdin, cwd=ROOT, capture_output=True, text=True, timeout=300
    )


def shown(done: subprocess.CompletedProcess[str]) -> str:
    return f"{' '.join(map(str, done.args))} exited {done.returncode}\n{done.stdout}\n{done.stderr}"


def template(*values: str) -> str:
    done = run(tool("helm"), "template", "turnstream", CHART, "--kube-version", KUBERNETES_VERSION, *values)
    assert done.returncode == 0, shown(done)
    return done.stdout


def manifests(*values: str) -> list[dict]:
    return [doc for doc in yaml.safe_load_all(template(*values)) if doc]


def by_kind(docs: list[dict]) -> dict[str, list[dict]]:
    kinds: dict[str, list[dict]] = {}
    for doc in docs:
        kinds.setdefault(doc["kind"], []).append(doc)
    return kinds


# --- the tools --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("values", VALUE_SETS.values(), ids=VALUE_SETS.keys())
def test_helm_lint(values: list[str]) -> None:
    done = run(tool("helm"), "lint", "--strict", CHART, "--kube-version", KUBERNETES_VERSION, *values)
    assert done.returncode == 0, shown(done)


def kubeconform(manifests: str, *options: str) -> subprocess.CompletedProcess[str]:
    """kubeconform -strict over `manifests` against the unpacked Kubernetes schemas and the KEDA ones of our own."""
    schemas = TOOLS / "kubernetes-json-schema"
    return run(
        tool("kubeconform"),
        "-strict",
        "-summary",
        *options,
        "-kubernetes-version",
        KUBERNETES_VERSION,
        "-schema-location",
        f"{schemas}/{{{{ .NormalizedKubernetesVersion }}}}-local{{{{ .StrictSuffix }}}}/{{{{ .ResourceKind }}}}{{{{ .KindSuffix }}}}.json",
        "-schema-location",
        f"{CRD_SCHEMAS}/{{{{ .ResourceKind }}}}{{{{ .KindSuffix }}}}.json",
        "-",
        stdin=manifests,
    )


@pytest.mark.parametrize("values", VALUE_SETS.values(), ids=VALUE_SETS.keys())
def test_helm_template_passes_kubeconform(values: list[str]) -> None:
    rendered = template(*values)
    done = kubeconform(rendered, "-verbose")
    assert done.returncode == 0, shown(done)
    # every resource was checked against a schema: none skipped for want of one
    assert "skipped" not in done.stdout.lower().replace("skipped: 0", ""), shown(done)
    valid = len(re.findall(r" is valid", done.stdout))
    assert valid == len([doc for doc in yaml.safe_load_all(rendered) if doc]), shown(done)


def test_kubeconform_rejects_a_broken_manifest() -> None:
    """The schemas are really read: a misspelt field of a Deployment and of a ScaledObject fail."""
    rendered = template(*EVERYTHING_ON)
    broken = rendered.replace("terminationGracePeriodSeconds:", "terminationGracePeriodSecond:", 1)
    broken = broken.replace("lagThreshold:", "lagTreshold:", 1).replace("pollingInterval:", "pollingIntervall:", 1)
    done = kubeconform(broken)
    assert done.returncode != 0, shown(done)
    assert "terminationGracePeriodSecond" in done.stdout and "pollingIntervall" in done.stdout, shown(done)


def test_promtool_check_rules() -> None:
    done = run(tool("promtool"), "check", "rules", RULES)
    assert done.returncode == 0, shown(done)


def test_promtool_test_rules_fires_each_alert() -> None:
    done = run(tool("promtool"), "test", "rules", RULE_TESTS)
    assert done.returncode == 0, shown(done)


# --- what the chart renders -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def default() -> dict[str, list[dict]]:
    return by_kind(manifests())


@pytest.fixture(scope="module")
def everything() -> dict[str, list[dict]]:
    return by_kind(manifests(*EVERYTHING_ON))


def named(docs: list[dict], suffix: str) -> dict:
    (doc,) = [doc for doc in docs if doc["metadata"]["name"].endswith(suffix)]
    return doc


def containers(kinds: dict[str, list[dict]]) -> Iterator[tuple[str, dict]]:
    for kind in ("Deployment", "StatefulSet"):
        for doc in kinds.get(kind, []):
            for container in doc["spec"]["template"]["spec"]["containers"]:
                yield doc["metadata"]["name"], container


def test_the_default_release_has_worker_and_serve(default: dict[str, list[dict]]) -> None:
    assert {doc["metadata"]["name"] for doc in default["Deployment"]} == {"turnstream-worker", "turnstream-serve"}
    assert "StatefulSet" not in default and "ScaledObject" not in default
    assert len(default["PodDisruptionBudget"]) == 2 and len(default["ConfigMap"]) == 1


def test_no_secret_in_the_configmap_and_the_settings_validate(everything: dict[str, list[dict]]) -> None:
    (config,) = everything["ConfigMap"]
    data = config["data"]
    assert not [key for key in data if SECRET_NAME.search(key)]
    assert not [value for value in data.values() if re.search(r"://[^/@]*:[^/@]*@", value)]
    known = {f"TURNSTREAM_{name.upper()}" for name in Settings.model_fields}
    assert set(data) <= known, set(data) - known
    # the secrets arrive from Secrets; with stand-ins for them, what a worker reads is valid
    env = {key.removeprefix("TURNSTREAM_").lower(): value for key, value in data.items()}
    settings = Settings(**env, kafka_sasl_username="u", kafka_sasl_password="p", web_port=6066)
    assert settings.embedded == "never" and settings.kafka_security_protocol == "SASL_SSL"


def test_a_secret_in_the_settings_is_refused() -> None:
    done = run(tool("helm"), "template", "turnstream", CHART, "--set", "settings.TURNSTREAM_REDIS_PASSWORD=hunter2")
    assert done.returncode != 0 and "existing Secret" in done.stderr, shown(done)
    done = run(
        tool("helm"), "template", "turnstream", CHART, "--set", "settings.TURNSTREAM_REDIS_URL=redis://u:pw@redis:6379"
    )
    assert done.returncode != 0 and "existing Secret" in done.stderr, shown(done)


def test_secrets_come_only_from_existing_secrets(everything: dict[str, list[dict]]) -> None:
    assert "Secret" not in everything  # the chart writes none: it names existing ones
    for name, container in containers(everything):
        for item in container["env"]:
            if SECRET_NAME.search(item["name"]):
                assert "value" not in item and item["valueFrom"]["secretKeyRef"]["name"], (name, item)
    worker_env = {
        item["name"]
        for item in named(everything["StatefulSet"], "-worker")["spec"]["template"]["spec"]["containers"][0]["env"]
    }
    assert {"TURNSTREAM_KAFKA_SASL_PASSWORD", "TURNSTREAM_REDIS_PASSWORD", "OPENAI_API_KEY"} <= worker_env
    serve_env = {
        item["name"]
        for item in named(everything["Deployment"], "-serve")["spec"]["template"]["spec"]["containers"][0]["env"]
    }
    assert "TURNSTREAM_SERVE_TOKENS" in serve_env
    inspect_env = {
        item["name"]
        for item in named(everything["Deployment"], "-inspect")["spec"]["template"]["spec"]["containers"][0]["env"]
    }
    assert "TURNSTREAM_INSPECT_TOKEN" in inspect_env and "TURNSTREAM_REDIS_PASSWORD" in inspect_env
    assert "TURNSTREAM_KAFKA_SASL_PASSWORD" not in inspect_env  # it reads Redis only


def test_probes_hit_the_real_endpoints(default: dict[str, list[dict]]) -> None:
    worker = named(default["Deployment"], "-worker")["spec"]["template"]["spec"]["containers"][0]
    env = {item["name"]: item.get("value") for item in worker["env"]}
    ports = {port["name"]: port["containerPort"] for port in worker["ports"]}
    assert ports["faust-web"] == int(env["TURNSTREAM_WEB_PORT"]) and env["TURNSTREAM_WEB_BIND"] == "0.0.0.0"
    assert ports["metrics"] == int(env["TURNSTREAM_METRICS_PORT"])
    assert worker["livenessProbe"]["httpGet"] == {"path": "/livez", "port": "faust-web"}
    assert worker["readinessProbe"]["httpGet"] == {"path": "/readyz", "port": "faust-web"}
    startup = worker["startupProbe"]
    (config,) = default["ConfigMap"]
    assert startup["periodSeconds"] * startup["failureThreshold"] > float(
        config["data"]["TURNSTREAM_STARTUP_TIMEOUT_SECONDS"]
    )
    serve = named(default["Deployment"], "-serve")["spec"]["template"]["spec"]["containers"][0]
    assert serve["livenessProbe"]["httpGet"] == {"path": "/livez", "port": "http"}
    assert serve["readinessProbe"]["httpGet"] == {"path": "/readyz", "port": "http"}
    assert {"name": "TURNSTREAM_SERVE_BIND", "value": "0.0.0.0"} in serve["env"]


def test_pods_run_non_root_on_a_read_only_root(everything: dict[str, list[dict]]) -> None:
    for kind in ("Deployment", "StatefulSet"):
        for doc in everything[kind]:
            pod = doc["spec"]["template"]["spec"]
            assert pod["securityContext"]["runAsNonRoot"] is True and pod["securityContext"]["runAsUser"] > 0
            for container in pod["containers"]:
                context = container["securityContext"]
                assert context["readOnlyRootFilesystem"] is True and context["allowPrivilegeEscalation"] is False
                assert context["capabilities"]["drop"] == ["ALL"]
                assert "/tmp" in {mount["mountPath"] for mount in container["volumeMounts"]}
                assert container["resources"]["requests"] and container["resources"]["limits"]["memory"]


def test_pdbs_and_the_metrics_service_select_their_pods(default: dict[str, list[dict]]) -> None:
    for deployment in default["Deployment"]:
        labels = deployment["spec"]["template"]["metadata"]["labels"]
        pdb = named(default["PodDisruptionBudget"], deployment["metadata"]["name"])
        assert pdb["spec"]["selector"]["matchLabels"].items() <= labels.items()
        assert deployment["spec"]["selector"]["matchLabels"] == pdb["spec"]["selector"]["matchLabels"]
    worker = named(default["Deployment"], "-worker")
    metrics = named(default["Service"], "-worker-metrics")["spec"]
    assert metrics["clusterIP"] == "None"
    assert metrics["selector"].items() <= worker["spec"]["template"]["metadata"]["labels"].items()
    assert [port["targetPort"] for port in metrics["ports"]] == ["metrics"]


def test_static_membership_names_each_worker_by_its_pod(everything: dict[str, list[dict]]) -> None:
    (worker,) = everything["StatefulSet"]
    env = {item["name"]: item for item in worker["spec"]["template"]["spec"]["containers"][0]["env"]}
    assert env["TURNSTREAM_GROUP_INSTANCE_ID"]["valueFrom"] == {"fieldRef": {"fieldPath": "metadata.name"}}
    assert int(env["TURNSTREAM_WEB_PORT"]["value"]) > 0  # settings refuse a group instance id on port 0
    assert worker["spec"]["serviceName"] == named(everything["Service"], "-worker-metrics")["metadata"]["name"]
    assert "replicas" not in worker["spec"]  # KEDA owns the count


def test_keda_scales_the_worker_group_on_lag_up_to_the_partitions(everything: dict[str, list[dict]]) -> None:
    (scaled,) = everything["ScaledObject"]
    (config,) = everything["ConfigMap"]
    (worker,) = everything["StatefulSet"]
    spec = scaled["spec"]
    assert spec["scaleTargetRef"] == {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "name": worker["metadata"]["name"],
    }
    assert spec["maxReplicaCount"] == int(config["data"]["TURNSTREAM_TURN_PARTITIONS"])
    from turnstream.kafka.admin import embedder_group, faust_app_id

    settings = Settings(topic_prefix=config["data"]["TURNSTREAM_TOPIC_PREFIX"])
    # the workers' group on the turns topic, and with embeddings on the embedders' own group on the journal
    assert [(t["metadata"]["consumerGroup"], t["metadata"]["topic"]) for t in spec["triggers"]] == [
        (faust_app_id(settings), settings.turns_topic),
        (embedder_group(settings), settings.memory_topic),
    ]
    (auth,) = everything["TriggerAuthentication"]
    for trigger in spec["triggers"]:
        assert trigger["type"] == "kafka"
        assert trigger["metadata"]["bootstrapServers"] == "kafka-bootstrap:9092"
        assert int(trigger["metadata"]["lagThreshold"]) > 0
        assert trigger["authenticationRef"]["name"] == auth["metadata"]["name"]
    assert {ref["parameter"] for ref in auth["spec"]["secretTargetRef"]} == {"username", "password"}


def test_without_embeddings_keda_watches_the_workers_group_alone() -> None:
    done = run(tool("helm"), "template", "turnstream", CHART, "--set", "worker.keda.enabled=true")
    assert done.returncode == 0, shown(done)
    (scaled,) = [doc for doc in yaml.safe_load_all(done.stdout) if doc and doc["kind"] == "ScaledObject"]
    assert [t["metadata"]["consumerGroup"] for t in scaled["spec"]["triggers"]] == ["turnstream-worker"]


@pytest.mark.parametrize(
    "values",
    [
        ["--set", "worker.replicas=9"],
        ["--set", "worker.keda.enabled=true", "--set", "worker.keda.maxReplicaCount=9"],
        ["--set", "settings.TURNSTREAM_TURN_PARTITIONS=4", "--set", "worker.replicas=5"],
    ],
    ids=["replicas", "keda-max", "fewer-partitions"],
)
def test_workers_beyond_the_partitions_are_refused(values: list[str]) -> None:
    done = run(tool("helm"), "template", "turnstream", CHART, *values)
    assert done.returncode != 0 and "TURNSTREAM_TURN_PARTITIONS" in done.stderr, shown(done)


def test_static_membership_needs_a_fixed_web_port() -> None:
    done = run(
        tool("helm"),
        "template",
        "turnstream",
        CHART,
        "--set",
        "worker.staticMembership.enabled=true",
        "--set",
        "worker.webPort=0",
    )
    assert done.returncode != 0 and "TURNSTREAM_WEB_PORT" in done.stderr, shown(done)
