"""The worker's health series: consumer lag per input partition, partitions and sessions held, rebalances, build info.

A Faust timer samples them every SAMPLE_SECONDS on the event loop (never from the metrics server's thread,
which would read the Table while the agent writes it). Lag is, per assigned input partition, the high
watermark of the latest fetch response minus the offset committed for the group: records not yet
processed and committed. Not ListOffsets: the embedded broker's answer to it counts a record batch as one
record. Each rebalance ends in an assignment (Faust's `on_partitions_assigned` signal): it is counted there,
and the lag of the partitions revoked from this worker is removed from the series at once.
"""

from __future__ import annotations

import platform
from collections.abc import Iterable, Mapping

import faust
from faust.types import TP

from turnstream import __version__
from turnstream.kafka.faust_private.consumer import committed_offsets
from turnstream.kafka.faust_private.table_rows import SessionsTable
from turnstream.kafka.groups import records_behind
from turnstream.kafka.signals import on_assigned, on_revoked
from turnstream.kafka.timers import timer
from turnstream.metrics import assigned_partitions, build_info, consumer_lag, rebalances_total, sessions_held
from turnstream.schemas.control import is_forget_marker
from turnstream.settings import Settings

SAMPLE_SECONDS = 5.0


def partition_lag(highwater: int | None, committed: int | None) -> int | None:
    """Records of a partition not committed yet; None while no fetch response has told its high watermark.

    `committed` is the offset of the next record to process; None when the group has committed nothing
    there, which counts from offset 0 (a topic whose retention deleted its head reads high until the first commit).
    """
    return None if highwater is None else records_behind(highwater, committed)


def count_held(rows: Mapping[str, bytes], keys: Iterable[str]) -> int:
    """How many of `keys` have a row in `rows` that is a session's state (not a forget marker)."""
    return sum(1 for key in keys if (row := rows.get(key)) is not None and not is_forget_marker(row))


class WorkerGauges:
    """Samples one worker's gauges; remembers which lag series it has, to remove those of revoked partitions."""

    def __init__(self, app: faust.App, settings: Settings, table: SessionsTable) -> None:
        self.app = app
        self.settings = settings
        self.table = table
        self.labelled: set[TP] = set()

    def input_partitions(self) -> set[TP]:
        """Assigned partitions of the topics the agents read and acknowledge: not the Tables' changelogs (active
        or standby), nor Faust's leader topic."""
        changelogs, topics = self.app.tables.changelog_topics, self.app.topics
        return {
            tp
            for tp in self.app.consumer.assignment()
            if topics.acks_enabled_for(tp.topic) and tp.topic not in changelogs
        }

    def sample(self) -> None:
        """Set every gauge from what the consumer and the Table hold now."""
        held = self.input_partitions()
        assigned_partitions.set(len(held))
        committed = committed_offsets(self.app.consumer)
        for tp in held:
            try:
                highwater = self.app.consumer.highwater(tp)
            except AssertionError:  # aiokafka asserts the partition is still assigned: a rebalance took it meanwhile
                continue
            lag = partition_lag(highwater, committed.get(tp))
            if lag is not None:
                consumer_lag.labels(tp.topic, str(tp.partition)).set(lag)
                self.labelled.add(tp)
        self.forget(self.labelled - held)
        turns = {tp.partition for tp in held if tp.topic == self.settings.turns_topic}
        sessions_held.set(count_held(self.table.data, self.table.held_keys(turns)))

    def forget(self, revoked: Iterable[TP]) -> None:
        """Remove the lag series of partitions this worker no longer holds."""
        for tp in set(revoked) & self.labelled:
            consumer_lag.remove(tp.topic, str(tp.partition))
            self.labelled.discard(tp)


def register_worker_gauges(app: faust.App, settings: Settings, table: SessionsTable) -> WorkerGauges:
    """Set build info, count rebalances, and sample the gauges of `app` every SAMPLE_SECONDS."""
    build_info.labels(__version__, platform.python_version(), faust.__version__).set(1)
    gauges = WorkerGauges(app, settings, table)

    @on_assigned(app)
    async def count_rebalance(assigned: set[TP]) -> None:
        rebalances_total.inc()
        gauges.sample()

    @on_revoked(app)
    async def forget_revoked(revoked: set[TP]) -> None:
        gauges.forget(revoked)

    @timer(app, SAMPLE_SECONDS, name=f"{settings.topic_prefix}.worker_gauges")
    async def sample_gauges() -> None:
        gauges.sample()

    return gauges
