"""A three-node Redis Cluster on loopback, from the redis-server the embedded stack uses, stopped by pid."""

from __future__ import annotations

import os
import random
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
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


@contextmanager
def redis_cluster() -> Iterator[list[int]]:
    """Start NODES cluster-enabled redis-servers, give them all 16384 slots, yield their ports; stop them by pid."""
    ports = _cluster_ports(NODES)
    with tempfile.TemporaryDirectory(prefix="turnstream-cluster-") as folder, ExitStack() as stack:
        for port in ports:
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
        for port in ports:
            _wait(lambda port=port: redis_answers(port), f"redis-server on port {port}")
        subprocess.run(
            [
                _redis_cli(),
                "--cluster",
                "create",
                *(f"{LOOPBACK}:{port}" for port in ports),
                "--cluster-replicas",
                "0",
                "--cluster-yes",
            ],
            check=True,
            capture_output=True,
        )
        for port in ports:
            _wait(lambda port=port: _cluster_ok(port), f"cluster_state:ok on port {port}")
        yield ports
