"""Workers as child processes for tests: stopped by process id, their log printed when a test fails."""

from __future__ import annotations

import re
import subprocess
import tempfile
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from turnstream.settings import Settings
from turnstream.streams.processes import start_worker, stop_process

_ASSIGNMENT_TABLE = re.compile(r"Setting newly assigned partitions(.*?)(?=\n\[|\Z)", re.S)


@dataclass
class RunningWorker:
    process: subprocess.Popen[bytes]
    log_path: Path

    @property
    def pid(self) -> int:
        return self.process.pid

    def poll(self) -> int | None:
        return self.process.poll()

    def wait(self) -> int:
        return self.process.wait()

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def assigned(self, topic: str) -> set[int]:
        """Partitions of `topic` in the worker's latest assignment, as Faust logs it at info level."""
        tables = _ASSIGNMENT_TABLE.findall(self.log())
        if not tables:
            return set()
        row = re.search(rf"\|\s*{re.escape(topic)}\s*\|\s*\{{([^}}]*)\}}", tables[-1])
        return _partitions(row.group(1)) if row else set()


def _partitions(spec: str) -> set[int]:
    """Faust's `0-1,3` notation to {0, 1, 3}."""
    found: set[int] = set()
    for part in filter(None, (p.strip() for p in spec.split(","))):
        low, _, high = part.partition("-")
        found.update(range(int(low), int(high or low) + 1))
    return found


@contextmanager
def running_worker(settings: Settings, name: str = "worker") -> Iterator[RunningWorker]:
    """A `turnstream worker` on the test services, stopped by its process id at the end."""
    log = tempfile.NamedTemporaryFile(prefix=f"turnstream-{name}-", suffix=".log", delete=False)
    worker = RunningWorker(start_worker(settings, log), Path(log.name))
    try:
        yield worker
    except BaseException:
        print(f"--- {name} log ---\n{worker.log()[-6000:]}")
        raise
    finally:
        stop_process(worker.process)
        log.close()
        worker.log_path.unlink(missing_ok=True)
