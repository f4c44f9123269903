"""Workers as child processes for tests: their log is printed when the test fails."""

from __future__ import annotations

import subprocess
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from turnstream.settings import Settings
from turnstream.streams.processes import start_worker, stop_process


@contextmanager
def running_worker(settings: Settings, name: str = "worker") -> Iterator[subprocess.Popen[bytes]]:
    """A `turnstream worker` on the test services, stopped by its process id at the end."""
    log = tempfile.NamedTemporaryFile(prefix=f"turnstream-{name}-", suffix=".log", delete=False)
    process = start_worker(settings, log)
    try:
        yield process
    except BaseException:
        print(f"--- {name} log ---\n{Path(log.name).read_text(errors='replace')[-6000:]}")
        raise
    finally:
        stop_process(process)
        log.close()
        Path(log.name).unlink(missing_ok=True)
