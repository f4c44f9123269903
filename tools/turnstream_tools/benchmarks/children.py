"""The bench's child processes (worker, pass-through agents): started with their settings, stopped by process id."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from turnstream.errors import TurnstreamError
from turnstream.settings import Settings
from turnstream.stack.processes import settings_env, start_worker, stop_process
from turnstream.stack.services import die_with_parent, free_port

STOP_GRACE_SECONDS = 10.0


class ChildDied(TurnstreamError, RuntimeError):
    """A child exited while the bench needed it; the message carries the end of its log."""


@dataclass
class Child:
    name: str
    process: subprocess.Popen[bytes]
    log: IO[bytes]

    def log_tail(self, chars: int = 1500) -> str:
        self.log.flush()
        return Path(self.log.name).read_text(errors="replace")[-chars:].strip()


@dataclass
class Children:
    """`with Children() as children:` every child started through it is stopped on the way out, whatever happened."""

    started: list[Child] = field(default_factory=list)
    """The children still to stop."""
    spawned: dict[str, int] = field(default_factory=dict)
    """Every child ever started here, name -> pid, for the report to list."""
    services: dict[str, int] = field(default_factory=dict)
    """The services started elsewhere (the embedded broker and Redis), name -> pid: not stopped here, only
    placed beside the children when the bench pins them."""
    keep_logs: bool = False
    """Leave each stopped child's log where it is instead of removing it."""
    kept: dict[str, str] = field(default_factory=dict)
    """name -> path of every log kept (with keep_logs), from the child's start."""

    def worker(self, settings: Settings, name: str = "worker") -> Child:
        """`turnstream worker` on `settings` (URLs set), its web server on a free loopback port."""
        log = self._log(name)
        return self._keep(name, start_worker(settings, log, loglevel="warning"), log)

    def passthrough(self, settings: Settings, mode: str) -> Child:
        """The pass-through agent `mode` (count or set) on `settings`, its web server on a free loopback port."""
        env = {**os.environ, **settings_env(settings), "TURNSTREAM_WEB_PORT": str(free_port())}
        argv = [sys.executable, "-m", "turnstream_tools.benchmarks.passthrough", mode]
        return self.command(f"passthrough-{mode}", argv, env)

    def command(self, name: str, argv: list[str], env: dict[str, str] | None = None) -> Child:
        """`argv` as a child named `name`, its output in its log; `env` replaces the environment when given."""
        log = self._log(name)
        process = subprocess.Popen(
            argv,
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env=env,
            preexec_fn=die_with_parent,  # as the workers: a bench killed with -9 leaves none of them behind
        )
        return self._keep(name, process, log)

    def running(self) -> dict[str, int]:
        """name -> pid of every child still to stop."""
        return {child.name: child.process.pid for child in self.started}

    def check(self) -> None:
        """Raise ChildDied when any child has exited."""
        for child in self.started:
            if child.process.poll() is not None:
                raise ChildDied(f"{child.name} exited with status {child.process.returncode}: {child.log_tail()}")

    def stop(self) -> None:
        """SIGTERM every child by pid (newest first), SIGKILL after a grace period; remove their logs, unless kept."""
        while self.started:
            self.stop_one(self.started[-1])

    def stop_one(self, child: Child) -> None:
        """Stop `child` as stop() does, leaving the others running."""
        self.started.remove(child)
        try:
            stop_process(child.process, STOP_GRACE_SECONDS)
        finally:
            child.log.close()
            if not self.keep_logs:
                Path(child.log.name).unlink(missing_ok=True)

    @staticmethod
    def _log(name: str) -> IO[bytes]:
        return tempfile.NamedTemporaryFile(prefix=f"turnstream-bench-{name}-", suffix=".log", delete=False)

    def _keep(self, name: str, process: subprocess.Popen[bytes], log: IO[bytes]) -> Child:
        child = Child(name, process, log)
        if self.keep_logs:
            self.kept[name] = log.name
        self.started.append(child)
        self.spawned[name] = process.pid
        return child

    def __enter__(self) -> Children:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()
