"""The session agent's registration: one partition's single writer, concurrency 1, crashing on a batch it
could not store."""

from __future__ import annotations

import functools
import logging

import faust
from faust.types import TP
from mode import CrashingSupervisor

from turnstream.agents.batch import Stepper, TableStates, Tombstones
from turnstream.agents.executor import Executor, Sinks, to_the_end
from turnstream.agents.sinks import (
    ArchiveSink,
    ContextSink,
    DeadLetterSink,
    ForgetSink,
    ForwardSink,
    JournalSink,
    MemorySink,
    NothingSent,
    RedisSink,
    ReleaseSink,
    SummaryRequestSink,
    TableSink,
)
from turnstream.agents.throttle import bucket_for
from turnstream.kafka.batches import acknowledge, take_batches
from turnstream.kafka.delivery_policy import ordered_delivery
from turnstream.kafka.signals import on_assigned, on_revoked
from turnstream.kafka.topics import Topics
from turnstream.redis.archive import ArchiveStore
from turnstream.redis.memory_store import MemoryStore
from turnstream.redis.writer import ContextWriter
from turnstream.schemas.ids import partition_of
from turnstream.session import CoreConfig, LiveStates, SessionCore
from turnstream.settings import Settings

log = logging.getLogger(__name__)


def live_states(settings: Settings, sessions: faust.Table[str, bytes]) -> LiveStates:
    """The worker's live session states, over the sessions Table (TURNSTREAM_LIVE_STATES_*)."""
    return LiveStates(
        TableStates(sessions),
        functools.partial(partition_of, partitions=settings.turn_partitions),
        settings.live_states_max,
        settings.live_states_idle_seconds,
    )


def executor_for(
    settings: Settings,
    topics: Topics,
    sessions: faust.Table[str, bytes],
    store: ContextWriter,
    tombstones: Tombstones,
    live: LiveStates,
) -> Executor:
    """The executor with the worker's real sinks, over the sessions Table and the live states kept beside it."""
    core = SessionCore(CoreConfig.from_settings(settings))
    stepper = Stepper(settings.summaries_topic, settings.max_content_bytes, live, core, tombstones)
    # A shadow reads another prefix's turns topic and never writes into it: the live worker forwards misrouted
    # turns and sends held ones round, and the shadow applies those copies as they come, like the live worker.
    shadow = settings.is_shadow
    sinks = Sinks(
        dead_letter=DeadLetterSink(topics.dlq),
        forward=NothingSent() if shadow else ForwardSink(topics.turns),
        release=NothingSent() if shadow else ReleaseSink(topics.turns),
        memory=MemorySink(MemoryStore(store.redis, settings)),
        redis=RedisSink(ArchiveSink(ArchiveStore(store.redis, settings)), ContextSink(store, core)),
        journal=JournalSink(sessions.app, settings.memory_topic, settings.turn_partitions),
        table=TableSink(sessions),
        forget=ForgetSink(store, settings.forget_marker_seconds),
        summary_request=SummaryRequestSink(topics.compaction),
    )
    return Executor(stepper, sinks, bucket_for(settings.max_turns_per_second))


def register_session_agent(
    app: faust.App, settings: Settings, topics: Topics, sessions: faust.Table[str, bytes]
) -> LiveStates:
    """Attach the session agent to `app`: concurrency 1, so per-partition order and commits stay exact; returns
    its live session states (session expiry drops them with their rows)."""
    tombstones = Tombstones()  # one per worker: an agent restarted by a rebalance does not log the first again
    live = live_states(settings, sessions)
    session_topics = set(topics.session_input.topics)

    # A rebalance revokes every partition before it assigns (the eager protocol), and a partition that comes back
    # may have moved on at another worker meanwhile: its sessions are restored from the Table rows it recovered.
    @on_revoked(app)
    async def drop_revoked_states(revoked: set[TP]) -> None:
        live.revoked({tp.partition for tp in revoked if tp.topic in session_topics})

    @on_assigned(app)
    async def keep_assigned_states(assigned: set[TP]) -> None:
        live.assigned({tp.partition for tp in assigned if tp.topic in session_topics})

    # A batch whose effects could not be stored (an error no retry mends) is not acknowledged, and no later
    # turn of its partition may be applied on top of the gap: the agent's crash stops the worker, rather
    # than Faust's default of restarting the agent on the next events; the partition's next owner (or this
    # worker, restarted) applies the batch again from the last committed offset.
    @app.agent(
        topics.session_input,
        name=f"{settings.topic_prefix}.session",
        concurrency=1,
        supervisor_strategy=CrashingSupervisor,
    )
    async def session_agent(stream: faust.StreamT[bytes]) -> None:
        store = ContextWriter.from_settings(settings)
        live.restart()
        executor = executor_for(settings, topics, sessions, store, tombstones, live)
        try:
            gate = ordered_delivery(app)
            gate.gate(topics.session_input.topics)
            async for events in take_batches(stream, settings.batch_max_events, settings.batch_max_ms / 1000, gate):
                try:
                    await to_the_end(executor.store_then_acknowledge(events, functools.partial(acknowledge, stream)))
                except Exception:
                    log.critical(
                        "a batch of %d events could not be stored; its offsets stay unacknowledged and the "
                        "worker stops, so the partition's next owner applies it again",
                        len(events),
                        exc_info=True,
                    )
                    raise
        finally:
            await store.aclose()

    return live
