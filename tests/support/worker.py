"""Workers as child processes for tests: stopped by process id, their log printed when a test fails."""

from __future__ import annotations

import asyncio
import re
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from aiokafka import AIOKafkaConsumer, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient
from aiokafka.errors import KafkaError

from turnstream.connections import kafka_options
from turnstream.kafka.admin import faust_app_id
from turnstream.kafka.end_offsets import fetched_end_offsets
from turnstream.settings import Settings
from turnstream.stack.processes import start_worker, stop_process

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


async def wait_until_drained(settings: Settings, worker: RunningWorker, timeout: float = 120) -> None:
    """Until the worker's group has committed every record of the turns topic, on every partition.

    A batch's offsets are committed only after its effects are stored and the turns it forwarded are on the
    broker, so then every record (a redelivered duplicate, a forwarded copy) has been applied or skipped: the
    positive signal that nothing more is on its way. The committed offsets are read before the ends, so a
    forward sent in between is counted in the end and waited for.
    """
    partitions = [TopicPartition(settings.turns_topic, p) for p in range(settings.turn_partitions)]
    admin = AIOKafkaAdminClient(**kafka_options(settings))
    consumer = AIOKafkaConsumer(**kafka_options(settings), group_id=None, enable_auto_commit=False)
    await admin.start()
    await consumer.start()
    try:
        deadline = time.monotonic() + timeout
        while True:
            assert worker.poll() is None, f"worker exited with status {worker.poll()}"
            try:
                offsets = await admin.list_consumer_group_offsets(faust_app_id(settings), partitions=partitions)
            except KafkaError as error:  # a fresh broker has no group coordinator until its offsets topic exists
                if not error.retriable:
                    raise
                await asyncio.sleep(0.5)
                continue
            committed = {tp: max(meta.offset, 0) for tp, meta in offsets.items()}
            ends = await fetched_end_offsets(kafka_options(settings), await consumer.end_offsets(partitions))
            behind = {
                tp.partition: (committed.get(tp, 0), end)
                for tp, end in ends.items()
                if committed.get(tp, 0) < (end or 0)
            }
            if not behind:
                return
            assert time.monotonic() < deadline, (
                f"turns not committed after {timeout}s, (committed, end) by partition: {behind}"
            )
            await asyncio.sleep(0.5)
    finally:
        await consumer.stop()
        await admin.close()
