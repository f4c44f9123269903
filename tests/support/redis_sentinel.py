"""A primary, its replica and one Sentinel on loopback, from the embedded redis-server binary, stopped by pid."""

from __future__ import annotations

import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
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


@dataclass(frozen=True)
class SentinelSetup:
    primary_port: int
    replica_port: int
    sentinel_port: int

    def current_primary(self) -> int:
        """The port Sentinel names as the primary now."""
        with redis.Redis(host=LOOPBACK, port=self.sentinel_port) as sentinel:
            _, port = sentinel.sentinel_get_master_addr_by_name(MASTER)
        return int(port)


def _wait(condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + READY_TIMEOUT_SECONDS
    while not condition():
        if time.monotonic() > deadline:
            raise StackError(f"{what} not within {READY_TIMEOUT_SECONDS:.0f}s")
        time.sleep(0.2)


def _replica_ready(sentinel_port: int) -> bool:
    """Sentinel knows a replica in sync with the primary: one it could promote (else SENTINEL FAILOVER refuses)."""
    with redis.Redis(host=LOOPBACK, port=sentinel_port) as sentinel:
        try:
            replicas = sentinel.sentinel_slaves(MASTER)
        except redis.RedisError:
            return False
    return any(
        r.get("master-link-status") == "ok"
        and r.get("is_slave")
        and not r.get("is_disconnected")
        and not r.get("is_sdown")
        for r in replicas
    )


@contextmanager
def redis_sentinel() -> Iterator[SentinelSetup]:
    """Start the three processes, wait until Sentinel watches the primary and knows the replica; stop them all."""
    setup = SentinelSetup(free_port(), free_port(), free_port())
    with tempfile.TemporaryDirectory(prefix="turnstream-sentinel-") as folder, ExitStack() as stack:
        config = Path(folder, "sentinel.conf")  # Sentinel rewrites its file, so it must be its own
        config.write_text(
            f"port {setup.sentinel_port}\nbind {LOOPBACK}\ndir {folder}\n"
            f"sentinel monitor {MASTER} {LOOPBACK} {setup.primary_port} 1\n"
            f"sentinel down-after-milliseconds {MASTER} 2000\nsentinel failover-timeout {MASTER} 10000\n"
        )
        commands = [
            ["--port", str(setup.primary_port)],
            ["--port", str(setup.replica_port), "--replicaof", LOOPBACK, str(setup.primary_port)],
        ]
        for n, arguments in enumerate(commands):
            log = stack.enter_context(open(Path(folder, f"redis-{n}.log"), "wb"))
            process = subprocess.Popen(
                [
                    redis_server_binary(),
                    *arguments,
                    "--bind",
                    LOOPBACK,
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
        log = stack.enter_context(open(Path(folder, "sentinel.log"), "wb"))
        sentinel = subprocess.Popen(
            [redis_server_binary(), str(config), "--sentinel"],
            stdout=log,
            stderr=subprocess.STDOUT,
            preexec_fn=die_with_parent,
        )
        stack.callback(stop_process, sentinel)
        for port in (setup.primary_port, setup.replica_port, setup.sentinel_port):
            _wait(lambda port=port: redis_answers(port), f"redis on port {port}")
        _wait(lambda: _replica_ready(setup.sentinel_port), "Sentinel seeing the replica in sync")
        yield setup
