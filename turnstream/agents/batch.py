"""A batch of the session agent: its records opened once (agents/envelope.py), their items stepped through the
pure session batch (session/session_batch.py), the effects they ask for collected.

No I/O but reading the sessions Table, through the state loader (the live state, when there is one): the
executor (agents/executor.py) carries the effects out.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import faust

from turnstream.agents.envelope import Consumed, Envelope, open_envelope
from turnstream.metrics import turns_total
from turnstream.schemas.control import ForgetRequest
from turnstream.schemas.turn import Turn
from turnstream.session import LiveStates, Loaded, SessionBatch, SessionCore, Skip, Step, loaded_from_row
from turnstream.tracing import kafka_attributes, record_span, recording

log = logging.getLogger(__name__)


def ms_since(start: float) -> float:
    return (time.perf_counter() - start) * 1000


@dataclass
class Batch:
    """One batch's sessions and the effects their records asked for, in record order."""

    sessions: SessionBatch[Envelope]
    events: int = 0
    """Records in the batch, whatever became of them."""
    traceparents: list[str] = field(default_factory=list)
    """The batch's traced stepped records, parents and links of its Redis write span."""
    dead: list[tuple[Envelope, str, str]] = field(default_factory=list)
    forwards: list[Envelope] = field(default_factory=list)
    """Misrouted turns: re-produced under their session key, not applied here."""
    broker_wait_ms: list[float] = field(default_factory=list)
    decode_ms: float = 0.0
    core_ms: float = 0.0

    @property
    def steps(self) -> list[tuple[Step, Envelope]]:
        return self.sessions.steps

    @property
    def released(self) -> list[Turn]:
        """Held turns the batch's steps released, to send round again, in step order."""
        return [turn for step, _ in self.steps for turn in step.release]


class TableStates:
    """The durable state loader: a session's Table row, restored (session/rules.py says what a row stands for);
    the live states (session/live.py) fall back on it."""

    def __init__(self, sessions: faust.Table[str, bytes]) -> None:
        self.sessions = sessions

    def load(self, key: str) -> Loaded:
        return loaded_from_row(self.sessions.get(key))


class Tombstones:
    """Records with a null value (Kafka tombstones) on the session agent's topics: nothing to apply.

    Each is counted (turns_total{outcome="tombstone"}) and acknowledged; the first is logged at info, the rest at debug.
    """

    def __init__(self) -> None:
        self.count = 0

    def skip(self, envelope: Envelope) -> None:
        self.count += 1
        turns_total.labels("tombstone").inc()
        message = envelope.event.message
        log.log(
            logging.INFO if self.count == 1 else logging.DEBUG,
            "ignoring a record with a null value (tombstone) at %s/%s/%s; further ones are logged at debug level",
            message.topic,
            message.partition,
            message.offset,
            extra=envelope.fields(),
        )


class Stepper:
    """Opens each record of a batch once and steps its item on the batch's state of its session."""

    def __init__(
        self,
        summaries_topic: str,
        max_content_bytes: int,
        loader: LiveStates,
        core: SessionCore,
        tombstones: Tombstones,
    ) -> None:
        self.summaries_topic = summaries_topic
        self.max_content_bytes = max_content_bytes
        self.loader = loader
        self.core = core
        self.tombstones = tombstones

    def batch(self, events: Sequence[Consumed]) -> Batch:
        """Every record of `events` stepped, in order."""
        batch = Batch(SessionBatch(self.loader, self.core), events=len(events))
        for event in events:
            self.step(batch, event)
        return batch

    def step(self, batch: Batch, event: Consumed) -> None:
        """The step for one record, on the batch's state of its session; a refused record is noted as dead."""
        decoding = time.perf_counter()
        envelope = open_envelope(event, self.summaries_topic, self.max_content_bytes)
        kind, key, item = envelope.kind, envelope.key, envelope.item
        if kind == "tombstone":
            self.tombstones.skip(envelope)
            return
        if envelope.refusal is not None:
            batch.dead.append((envelope, *envelope.refusal))
            _trace(envelope, decoding, None, envelope.refusal[0])
            return
        if kind == "misrouted":
            batch.forwards.append(envelope)
            return
        assert key is not None and item is not None  # every other kind names its session
        if isinstance(item, ForgetRequest):
            batch.sessions.erase(key, item, envelope)
            return
        if kind in ("turn", "forwarded"):
            batch.broker_wait_ms.append(max(0.0, time.time() - event.message.timestamp) * 1000)
        computing = time.perf_counter()
        batch.decode_ms += (computing - decoding) * 1000
        try:
            result = batch.sessions.apply(key, item, envelope, time.time())
        except Exception as error:  # noqa: BLE001 - one bad record must not take the batch (or the worker) down
            log.exception(
                "event at %s/%s failed; dead-lettered, its session's state rebuilt without it",
                event.message.partition,
                event.message.offset,
                extra=envelope.fields(key),
            )
            batch.dead.append((envelope, "internal", repr(error)))
            batch.sessions.rebuild(key, time.time())
            return
        batch.core_ms += ms_since(computing)
        _trace(envelope, decoding, computing)
        if isinstance(result, Skip):
            if result.reason == "forgotten":
                turns_total.labels("forgotten").inc()
            if result.dead_letter is not None:
                batch.dead.append((envelope, *result.dead_letter))
            return
        if result.outcome == "duplicate":
            log.debug(
                "turn %s at %s/%s seen already: replay skipped",
                envelope.turn_id,
                event.message.partition,
                event.message.offset,
                extra=envelope.fields(key),
            )
        if result.dead_letter is not None:
            batch.dead.append((envelope, *result.dead_letter))
        if envelope.traceparent:
            batch.traceparents.append(envelope.traceparent)


def _trace(envelope: Envelope, decoding: float, computing: float | None, error: str | None = None) -> None:
    """Spans of one record: processing it, with decode and (unless it was refused) compaction inside."""
    if not recording():
        return
    message, done = envelope.event.message, time.perf_counter()
    parent = record_span(
        f"process {message.topic}",
        decoding,
        done,
        envelope.traceparent,
        kafka_attributes(message.topic, message.partition, message.offset, message.key),
        error=error,
        kind="CONSUMER",
    )
    record_span("turnstream.decode", decoding, computing or done, parent, error=error)
    if computing is not None:
        record_span("turnstream.compaction", computing, done, parent)
