"""A three-node Redis Cluster on loopback, from the redis-server the embedded stack uses, stopped by pid."""

from __future__ import annotations

import os
import random
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from turnstream.stack.processes import stop_process
from turnstream.stack.services import (
    LOOPBACK,
    StackError,
    die_with_parent,
    ensure_port_free,
    redis_answers,
    redis_server_binary,
)

NODES = 3
READY_TIMEOUT_SECONDS = 30.0
_BUS_OFFSET = 10000
"""redis-server 6.2 listens for the cluster bus on port + 10000 (no --cluster-port before 7.0)."""


def _cluster_ports(count: int) -> list[int]:
    """`count` ports below 55536 that are free, each with its bus port free too."""
    ports: list[int] = []
    while len(ports) < count:
        port = random.randrange(20000, 55000)
        try:
            ensure_port_free(port)
            ensure_port_free(port + _BUS_OFFSET)
        except StackError:
            continue
        if port not in ports:
            ports.append(port)
    return ports


def _redis_cli() -> str:
    cli = Path(redis_server_binary()).with_name("redis-cli")
    if not os.access(cli, os.X_OK):
        raise StackError(f"no redis-cli next to {redis_server_binary()}")
    return str(cli)


def _wait(condition: object, what: str) -> None:
    deadline = time.monotonic() + READY_TIMEOUT_SECONDS
    while not condition():  # type: ignore[operator]
        if time.monotonic() > deadline:
            raise StackError(f"{what} not within {READY_TIMEOUT_SECONDS:.0f}s")
        time.sleep(0.1)


def _cluster_ok(port: int) -> bool:
    reply = subprocess.run(
        [_redis_cli(), "-p", str(port), "cluster", "info"], capture_output=True, text=True, check=False
    )
    return "cluster_state:ok" in reply.stdout


@dataclass(frozen=True)
class ClusterSetup:
    """A cluster's nodes: its primaries, the replica of each, and the redis-server of every port."""

    primaries: list[int]
    replica_of: dict[int, int]
    """Primary port -> the port of its replica (empty without replicas)."""
    servers: dict[int, subprocess.Popen[bytes]] = field(compare=False)


def _start_node(stack: ExitStack, folder: str, port: int, node_timeout_ms: int) -> subprocess.Popen[bytes]:
    log = stack.enter_context(open(Path(folder, f"{port}.log"), "wb"))
    process = subprocess.Popen(
        [
            redis_server_binary(),
            "--port",
            str(port),
            "--bind",
            LOOPBACK,
            "--cluster-enabled",
            "yes",
            "--cluster-config-file",
            str(Path(folder, f"nodes-{port}.conf")),
            "--cluster-node-timeout",
            str(node_timeout_ms),
            "--dir",
            folder,
            "--save",
            "",
            "--appendonly",
            "no",
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
        preexec_fn=die_with_parent,
    )
    stack.callback(stop_process, process)
    return process


def _roles(port: int) -> tuple[list[int], dict[int, int]]:
    """The primaries (by port) and each one's replica, as CLUSTER NODES on `port` tells."""
    reply = subprocess.run(
        [_redis_cli(), "-p", str(port), "cluster", "nodes"], capture_output=True, text=True, check=True
    ).stdout
    ports: dict[str, int] = {}
    primaries: list[int] = []
    replicas: dict[str, int] = {}
    for line in reply.splitlines():
        node_id, address, flags, master = line.split()[:4]
        ports[node_id] = int(address.split("@")[0].rsplit(":", 1)[1])
        if "master" in flags.split(","):
            primaries.append(ports[node_id])
        elif "slave" in flags.split(","):
            replicas[master] = ports[node_id]
    return sorted(primaries), {ports[master]: replica for master, replica in replicas.items()}


@contextmanager
def redis_cluster_nodes(replicas: int = 0, node_timeout_ms: int = 15000) -> Iterator[ClusterSetup]:
    """Start NODES primaries (and `replicas` replicas of each), give the primaries all 16384 slots; stop them all
    by pid. `node_timeout_ms` is how long a node may not answer before the others call it failed."""
    ports = _cluster_ports(NODES * (1 + replicas))
    with tempfile.TemporaryDirectory(prefix="turnstream-cluster-") as folder, ExitStack() as stack:
        servers = {port: _start_node(stack, folder, port, node_timeout_ms) for port in ports}
        for port in ports:
            _wait(lambda port=port: redis_answers(port), f"redis-server on port {port}")
        subprocess.run(
            [
                _redis_cli(),
                "--cluster",
                "create",
                *(f"{LOOPBACK}:{port}" for port in ports),
                "--cluster-replicas",
                str(replicas),
                "--cluster-yes",
            ],
            check=True,
            capture_output=True,
        )
        for port in ports:
            _wait(lambda port=port: _cluster_ok(port), f"cluster_state:ok on port {port}")
        _wait(lambda: len(_roles(ports[0])[1]) == NODES * replicas, "every replica known to the first node")
        yield ClusterSetup(*_roles(ports[0]), servers)


@contextmanager
def redis_cluster() -> Iterator[list[int]]:
    """Start NODES cluster-enabled redis-servers, give them all 16384 slots, yield their ports; stop them by pid."""
    with redis_cluster_nodes() as setup:
        yield setup.primaries
