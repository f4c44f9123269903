"""A primary, its replica and three Sentinels on loopback, from the embedded redis-server binary, stopped by pid."""

from __future__ import annotations

import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import redis

from turnstream.stack.processes import stop_process
from turnstream.stack.services import (
    LOOPBACK,
    StackError,
    die_with_parent,
    free_port,
    redis_answers,
    redis_server_binary,
)

MASTER = "primary"
READY_TIMEOUT_SECONDS = 30.0
SENTINELS = 3


@dataclass(frozen=True)
class SentinelSetup:
    primary_port: int
    replica_port: int
    sentinel_ports: tuple[int, ...]
    folder: Path
    """Where the servers' and sentinels' logs are."""
    servers: dict[int, subprocess.Popen[bytes]] = field(default_factory=dict, compare=False)
    """Port -> the redis-server serving it (the primary's and the replica's), for a test that signals one."""

    @contextmanager
    def logs_on_failure(self) -> Iterator[None]:
        """Print the end of every server's and sentinel's log when the block fails: what each saw of a failover."""
        try:
            yield
        except BaseException:
            for log in sorted(self.folder.glob("*.log")):
                print(f"--- {log.name} ---\n{log.read_text(errors='replace')[-3000:]}")
            raise

    @property
    def sentinel_port(self) -> int:
        """The first sentinel: any of them answers for all."""
        return self.sentinel_ports[0]

    def current_primary(self) -> int:
        """The port Sentinel names as the primary now."""
        with redis.Redis(host=LOOPBACK, port=self.sentinel_port) as sentinel:
            _, port = sentinel.sentinel_get_master_addr_by_name(MASTER)
        return int(port)

    def url(self) -> str:
        """TURNSTREAM_REDIS_URL for this setup: every sentinel, as a deployment lists them."""
        return "redis://" + ",".join(f"{LOOPBACK}:{port}" for port in self.sentinel_ports) + "/0"


def _wait(condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + READY_TIMEOUT_SECONDS
    while not condition():
        if time.monotonic() > deadline:
            raise StackError(f"{what} not within {READY_TIMEOUT_SECONDS:.0f}s")
        time.sleep(0.2)


def _sentinel_ready(sentinel_port: int, others: int) -> bool:
    """This sentinel knows a replica in sync with the primary (one it could promote, else a failover is refused) and
    every other sentinel (else no majority elects a leader to run an unplanned failover)."""
    with redis.Redis(host=LOOPBACK, port=sentinel_port) as sentinel:
        try:
            replicas = sentinel.sentinel_slaves(MASTER)
            peers = sentinel.sentinel_sentinels(MASTER)
        except redis.RedisError:
            return False
    return len(peers) >= others and any(
        r.get("master-link-status") == "ok"
        and r.get("is_slave")
        and not r.get("is_disconnected")
        and not r.get("is_sdown")
        for r in replicas
    )


def _server(stack: ExitStack, folder: str, name: str, arguments: list[str]) -> subprocess.Popen[bytes]:
    """A redis-server (or sentinel) child, its output in `folder`, stopped by pid when `stack` closes."""
    log = stack.enter_context(open(Path(folder, f"{name}.log"), "wb"))
    process = subprocess.Popen(
        [redis_server_binary(), *arguments],
        stdout=log,
        stderr=subprocess.STDOUT,
        preexec_fn=die_with_parent,
    )
    stack.callback(stop_process, process)
    return process


def _sentinel_config(folder: str, port: int, primary_port: int, down_after_ms: int, failover_timeout_ms: int) -> Path:
    """A sentinel's own file (Sentinel rewrites it): a majority of the sentinels must agree the primary is down."""
    config = Path(folder, f"sentinel-{port}.conf")
    config.write_text(
        f"port {port}\nbind {LOOPBACK}\ndir {folder}\n"
        f"sentinel monitor {MASTER} {LOOPBACK} {primary_port} {SENTINELS // 2 + 1}\n"
        f"sentinel down-after-milliseconds {MASTER} {down_after_ms}\n"
        f"sentinel failover-timeout {MASTER} {failover_timeout_ms}\n"
    )
    return config


@contextmanager
def redis_sentinel(down_after_ms: int = 2000, failover_timeout_ms: int = 10000) -> Iterator[SentinelSetup]:
    """Start the primary, the replica and three sentinels; wait until every sentinel watches the primary, knows the
    replica in sync and the other sentinels; stop them all."""
    with tempfile.TemporaryDirectory(prefix="turnstream-sentinel-") as folder, ExitStack() as stack:
        setup = SentinelSetup(free_port(), free_port(), tuple(free_port() for _ in range(SENTINELS)), Path(folder))
        plain = ["--bind", LOOPBACK, "--dir", folder, "--save", "", "--appendonly", "no"]
        setup.servers[setup.primary_port] = _server(
            stack, folder, "primary", ["--port", str(setup.primary_port), *plain]
        )
        setup.servers[setup.replica_port] = _server(
            stack,
            folder,
            "replica",
            ["--port", str(setup.replica_port), "--replicaof", LOOPBACK, str(setup.primary_port), *plain],
        )
        for port in setup.sentinel_ports:
            config = _sentinel_config(folder, port, setup.primary_port, down_after_ms, failover_timeout_ms)
            _server(stack, folder, f"sentinel-{port}", [str(config), "--sentinel"])
        for port in (setup.primary_port, setup.replica_port, *setup.sentinel_ports):
            _wait(lambda port=port: redis_answers(port), f"redis on port {port}")
        for port in setup.sentinel_ports:
            _wait(
                lambda port=port: _sentinel_ready(port, SENTINELS - 1),
                f"sentinel {port} seeing the replica and its peers",
            )
        yield setup
