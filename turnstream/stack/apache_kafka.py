"""Apache Kafka (KRaft) for development and tests, run from the jars `make kafka` fetches: one node, or a cluster
of three replicating every topic three times with two in sync required.

Pure parts first: the broker's properties and its command lines, from a `KafkaNode` that says which
listeners it has and which quorum it belongs to. `start_storage` formats the log folder (and creates SCRAM users there, as KRaft wants);
the embedded stack (`stack/services.py`) spawns and stops the JVM like its other child services.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import tempfile
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from turnstream.errors import TurnstreamError

LOG_CONFIG = Path(__file__).with_name("kafka-log4j2.properties")
"""Log4j 2 configuration (properties format: no YAML jar needed): warnings, plus the start and stop lines."""
JVM_OPTIONS = (
    "-Xms256m",
    "-Xmx768m",
    # a 2-core machine shared with the workers and Redis: few GC and JIT threads
    "-XX:+UseG1GC",
    "-XX:MaxGCPauseMillis=20",
    "-XX:ParallelGCThreads=2",
    "-XX:ConcGCThreads=1",
    "-XX:CICompilerCount=2",
    "-Djava.awt.headless=true",
)
DEFAULT_LIB = Path(__file__).resolve().parents[2] / ".kafka" / "lib"
"""Where `make kafka` puts the broker's jars in a source checkout."""
FETCH_COMMAND = "make kafka"
WORKDIR_PREFIX = "turnstream-apache-kafka-"
LOG_FOLDER = "data"
"""In a node's folder: its log.dirs."""
QUORUM_STATE = Path("__cluster_metadata-0") / "quorum-state"
"""In a node's log folder: the KRaft election state it last saw, as JSON (`leaderId`, `leaderEpoch`, …)."""
OWNER_FILE = "owner.pid"
"""In a node's folder: the process id of the stack that made it, so a later stack can tell a leftover."""
SCRAM_MECHANISM = "SCRAM-SHA-512"


class KafkaUnavailable(TurnstreamError, RuntimeError):
    """Java or the broker's jars are missing; the message is one line and says how to get them."""


@dataclass(frozen=True)
class TlsFiles:
    """The broker's TLS identity as PEM files: its certificate chain and its unencrypted PKCS#8 key."""

    certfile: Path
    keyfile: Path


@dataclass(frozen=True)
class KafkaNode:
    """Which listeners one broker-and-controller node opens on loopback, and who may log in."""

    port: int
    """The PLAINTEXT listener: the stack's KAFKA_URL, also used between broker and controller."""
    controller_port: int
    sasl_port: int | None = None
    """A SASL_PLAINTEXT listener taking SCRAM-SHA-512 logins of `scram_users`."""
    ssl_port: int | None = None
    """An SSL listener presenting `tls`."""
    tls: TlsFiles | None = None
    scram_users: dict[str, str] = field(default_factory=dict)
    """name -> password, created when the storage is formatted."""
    host: str = "127.0.0.1"
    node_id: int = 1
    voters: str = ""
    """The controller quorum, `id@host:port` comma separated; empty: this node alone."""
    replication: int = 1
    """The cluster's size: the replication factor of every topic it creates, internal ones included."""

    def listeners(self) -> dict[str, int]:
        """Listener name -> port; each name is also its security protocol."""
        named = {"PLAINTEXT": self.port, "CONTROLLER": self.controller_port}
        if self.sasl_port:
            named["SASL_PLAINTEXT"] = self.sasl_port
        if self.ssl_port:
            named["SSL"] = self.ssl_port
        return named

    def url(self, listener: str = "PLAINTEXT") -> str:
        return f"kafka://{self.host}:{self.listeners()[listener]}"

    def quorum(self) -> str:
        return self.voters or f"{self.node_id}@{self.host}:{self.controller_port}"


def cluster_nodes(ports: list[tuple[int, int]], host: str = "127.0.0.1") -> list[KafkaNode]:
    """Nodes of one KRaft cluster, one per (broker port, controller port), every one a voter of the quorum."""
    voters = ",".join(f"{n}@{host}:{controller}" for n, (_, controller) in enumerate(ports, start=1))
    return [
        KafkaNode(port=port, controller_port=controller, host=host, node_id=n, voters=voters, replication=len(ports))
        for n, (port, controller) in enumerate(ports, start=1)
    ]


@dataclass(frozen=True)
class QuorumView:
    """What one node's quorum-state file says: the newest election epoch it has seen, and that epoch's leader."""

    epoch: int
    leader: int | None
    """None while the node knows no leader of `epoch` (an election under way)."""


def quorum_view(content: str) -> QuorumView | None:
    """One node's quorum-state file read; None for content that is not such a file (one being rewritten)."""
    try:
        state = json.loads(content)
        epoch, leader = int(state["leaderEpoch"]), int(state["leaderId"])
    except (ValueError, KeyError, TypeError):
        return None
    return QuorumView(epoch, leader if leader >= 0 else None)


def active_controller(contents: Iterable[str]) -> int | None:
    """The node id of the active controller (the metadata quorum's leader), from every node's quorum-state file:
    the leader of the newest epoch any node has seen. A killed leader's file keeps naming it at its old epoch, so
    the newest epoch, not a majority, decides; None while no node knows that epoch's leader."""
    views = [view for view in map(quorum_view, contents) if view is not None]
    if not views:
        return None
    newest = max(view.epoch for view in views)
    return next((view.leader for view in views if view.epoch == newest and view.leader is not None), None)


def min_in_sync(replication: int) -> int:
    """Replicas that must hold a write before acks=all answers: a majority, so one node may be lost."""
    return replication // 2 + 1


def server_properties(node: KafkaNode, log_dir: Path) -> dict[str, str]:
    """The broker's server.properties, sized for a 2-core machine that also runs the workers and Redis."""
    listeners = node.listeners()
    if node.ssl_port and node.tls is None:
        raise ValueError("an SSL listener needs the broker's TLS files")
    in_sync = min_in_sync(node.replication)
    properties = {
        "process.roles": "broker,controller",
        "node.id": str(node.node_id),
        "controller.quorum.voters": node.quorum(),
        "controller.listener.names": "CONTROLLER",
        "inter.broker.listener.name": "PLAINTEXT",
        "listeners": ",".join(f"{name}://{node.host}:{port}" for name, port in listeners.items()),
        "advertised.listeners": ",".join(
            f"{name}://{node.host}:{port}" for name, port in listeners.items() if name != "CONTROLLER"
        ),
        "listener.security.protocol.map": ",".join(
            f"{name}:{'PLAINTEXT' if name == 'CONTROLLER' else name}" for name in listeners
        ),
        "log.dirs": str(log_dir),
        "num.partitions": "4",
        "default.replication.factor": str(node.replication),
        "min.insync.replicas": str(in_sync),
        "offsets.topic.replication.factor": str(node.replication),
        "offsets.topic.num.partitions": "4",
        "transaction.state.log.replication.factor": str(node.replication),
        "transaction.state.log.min.isr": str(in_sync),
        "transaction.state.log.num.partitions": "4",
        "share.coordinator.state.topic.replication.factor": str(node.replication),
        "share.coordinator.state.topic.min.isr": str(in_sync),
        # a group forms at once: tests and the dev stack start workers one after another anyway
        "group.initial.rebalance.delay.ms": "0",
        "num.network.threads": "2",
        "num.io.threads": "2",
        "num.recovery.threads.per.data.dir": "1",
        "background.threads": "2",
        "log.cleaner.threads": "1",
        "log.cleaner.dedupe.buffer.size": str(16 * 1024 * 1024),  # 128 MiB of heap by default
        "log.cleaner.backoff.ms": "1000",  # a topic made compactable in a test is looked at within a second
        "auto.create.topics.enable": "true",
    }
    if node.sasl_port:
        jaas = "org.apache.kafka.common.security.scram.ScramLoginModule required;"
        properties["sasl.enabled.mechanisms"] = SCRAM_MECHANISM
        properties[f"listener.name.sasl_plaintext.{SCRAM_MECHANISM.lower()}.sasl.jaas.config"] = jaas
    if node.ssl_port and node.tls is not None:
        properties["listener.name.ssl.ssl.keystore.type"] = "PEM"
        properties["listener.name.ssl.ssl.keystore.certificate.chain"] = _pem_line(node.tls.certfile)
        properties["listener.name.ssl.ssl.keystore.key"] = _pem_line(node.tls.keyfile)
        properties["listener.name.ssl.ssl.client.auth"] = "none"
    return properties


def _pem_line(path: Path) -> str:
    """A PEM file as one properties value (Kafka takes inline PEM with its line breaks escaped)."""
    return "\\n".join(path.read_text().strip().splitlines())


def render_properties(properties: dict[str, str]) -> str:
    return "".join(f"{key}={value}\n" for key, value in properties.items())


def cluster_id(random_bytes: Callable[[], bytes] = lambda: uuid.uuid4().bytes) -> str:
    """A fresh KRaft cluster id: a UUID in URL-safe base64, unpadded (22 characters).

    One in 64 such ids starts with "-", which the storage tool's argument parser reads as an option
    ("--cluster-id/-t: expected one argument"); Kafka's own Uuid.randomUuid draws again, and so do we.
    """
    while True:
        found = base64.urlsafe_b64encode(random_bytes()).decode().rstrip("=")
        if not found.startswith("-"):
            return found


def java_command(lib: Path, main_class: str, *arguments: str, jvm_options: tuple[str, ...] = ()) -> list[str]:
    """`java` running one of the broker's main classes with the jars of `lib` and the log configuration."""
    return [
        java_binary(),
        *jvm_options,
        f"-Dlog4j2.configurationFile={LOG_CONFIG}",
        "-cp",
        f"{lib}/*",
        main_class,
        *arguments,
    ]


def format_arguments(properties_file: Path, cluster: str, scram_users: dict[str, str]) -> list[str]:
    """StorageTool's arguments: format the log folder for `cluster`, with a SCRAM credential per user."""
    arguments = ["format", "-t", cluster, "-c", str(properties_file)]
    for name, password in scram_users.items():
        arguments += ["--add-scram", f"{SCRAM_MECHANISM}=[name={name},password={password}]"]
    return arguments


def java_binary() -> str:
    found = shutil.which("java")
    if found is None:
        raise KafkaUnavailable(
            "no `java` on PATH: Apache Kafka needs Java 17 or newer (apt-get install openjdk-17-jre-headless)"
        )
    return found


def kafka_lib(configured: str | None = None) -> Path:
    """The folder of the broker's jars: the configured one, else the checkout's `.kafka/lib`."""
    lib = Path(configured) if configured else DEFAULT_LIB
    if not any(lib.glob("kafka_2.13-*.jar")):
        raise KafkaUnavailable(
            f"no Apache Kafka jars in {lib}: run `{FETCH_COMMAND}` in the turnstream checkout "
            "(or set TURNSTREAM_KAFKA_JARS to a folder holding them)"
        )
    return lib


def new_workdir(parent: Path | None = None) -> Path:
    """A fresh folder for one node's properties and log, once the folders of stacks that are gone are removed
    (a stack killed with SIGKILL cannot remove its own; its JVM dies with it)."""
    parent = parent or Path(tempfile.gettempdir())
    for folder in parent.glob(WORKDIR_PREFIX + "*"):
        if _owner_gone(folder / OWNER_FILE):
            shutil.rmtree(folder, ignore_errors=True)
    workdir = Path(tempfile.mkdtemp(prefix=WORKDIR_PREFIX, dir=parent))
    (workdir / OWNER_FILE).write_text(str(os.getpid()))
    return workdir


def _owner_gone(owner_file: Path) -> bool:
    try:
        pid = int(owner_file.read_text())
    except (OSError, ValueError):
        return False  # no owner written (yet): not ours to remove
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False  # another user's live process
    return False


def start_storage(lib: Path, node: KafkaNode, workdir: Path, cluster: str | None = None) -> Path:
    """Write server.properties into `workdir` and format a fresh log folder there for `cluster` (every node of a
    cluster is formatted with the same id; default: a new one); returns the properties file."""
    log_dir = workdir / LOG_FOLDER
    properties_file = workdir / "server.properties"
    properties_file.write_text(render_properties(server_properties(node, log_dir)))
    done = subprocess.run(
        java_command(
            lib,
            "kafka.tools.StorageTool",
            *format_arguments(properties_file, cluster or cluster_id(), node.scram_users),
        ),
        capture_output=True,
        text=True,
        timeout=120,
    )
    if done.returncode != 0:
        tail = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no output"]
        raise KafkaUnavailable(f"formatting the Kafka storage failed: {tail[0]}")
    return properties_file


def broker_command(lib: Path, properties_file: Path) -> list[str]:
    return java_command(lib, "kafka.Kafka", str(properties_file), jvm_options=JVM_OPTIONS)
