"""A batch of the session agent: its events stepped through the pure core, the effects they ask for collected.

No I/O but reading the sessions Table: the executor (agents/session.py) carries the effects out.
"""

from __future__ import annotations

import logging
import time
from collections import defaultdict
from dataclasses import dataclass, field

import faust
from faust.types import EventT

from turnstream.agents.fields import record_fields
from turnstream.agents.ingest import was_forwarded
from turnstream.schemas import Turn, TurnError, decode_turn
from turnstream.schemas.control import ForgetRequest, PopRequest, is_forget_marker, parse_forget, parse_pop
from turnstream.schemas.keys import Forward, route
from turnstream.session import Forwarded, SessionCore, SessionState, Step, SummaryResult
from turnstream.settings import Settings
from turnstream.streams.metrics import turns_total
from turnstream.tracing import carried, kafka_attributes, record_span, recording, traceparent

log = logging.getLogger(__name__)


Input = Turn | Forwarded | SummaryResult | PopRequest
"""What the core steps a session's state with."""


def ms_since(start: float) -> float:
    return (time.perf_counter() - start) * 1000


@dataclass
class Batch:
    """One batch's sessions and the effects their events asked for, in event order."""

    states: dict[str, SessionState] = field(default_factory=dict)
    last_event: dict[str, EventT] = field(default_factory=dict)
    """Per session, its latest event: the Table row goes to that event's changelog partition."""
    inputs: defaultdict[str, list[Input]] = field(default_factory=lambda: defaultdict(list))
    """Per session, what this batch fed its state: enough to rebuild it if one event breaks it."""
    steps: list[Step] = field(default_factory=list)
    carried: list[list[tuple[str, bytes]]] = field(default_factory=list)
    """Per step, its event's trace-context headers: what the step produces carries them on."""
    traceparents: list[str] = field(default_factory=list)
    """The batch's traced events, parents and links of its Redis write span."""
    dead: list[tuple[EventT, str, str]] = field(default_factory=list)
    forgotten: dict[str, tuple[EventT, ForgetRequest]] = field(default_factory=dict)
    """Sessions erased by a forget record in this batch: their row becomes a forget marker."""
    forwards: list[tuple[EventT, Forward]] = field(default_factory=list)
    """Turns keyed by anything but their session key: re-produced under it, not applied here."""
    broker_wait_ms: list[float] = field(default_factory=list)
    decode_ms: float = 0.0
    core_ms: float = 0.0


class Tombstones:
    """Records with a null value (Kafka tombstones) on the session agent's topics: nothing to apply.

    Each is counted (turns_total{outcome="tombstone"}) and acknowledged; the first is logged at info, the rest at debug.
    """

    def __init__(self) -> None:
        self.count = 0

    def skip(self, event: EventT) -> None:
        self.count += 1
        turns_total.labels("tombstone").inc()
        message = event.message
        log.log(
            logging.INFO if self.count == 1 else logging.DEBUG,
            "ignoring a record with a null value (tombstone) at %s/%s/%s; further ones are logged at debug level",
            message.topic, message.partition, message.offset, extra=record_fields(message),
        )


class Stepper:
    """Feeds a batch's events through the core, in order, on one state per session loaded once per batch."""

    def __init__(self, settings: Settings, sessions: faust.Table, core: SessionCore, tombstones: Tombstones) -> None:
        self.settings = settings
        self.sessions = sessions
        self.core = core
        self.tombstones = tombstones

    def step(self, batch: Batch, event: EventT) -> None:
        """The core's step for one event, on the batch's state of its session; a refused event is noted as dead."""
        if event.value is None:
            self.tombstones.skip(event)
            return
        key: str | None = None
        try:
            decoding = time.perf_counter()
            if event.message.topic == self.settings.summaries_topic:
                item: Input = SummaryResult.from_bytes(event.value)
                key = item.session_key
            elif (request := parse_forget(event.value)) is not None:
                self._forget(batch, event, request)
                return
            elif (pop := parse_pop(event.value)) is not None:
                item, key = pop, pop.session_key
            else:
                try:
                    item = decode_turn(event.value, self.settings.max_content_bytes)
                except TurnError as error:
                    batch.dead.append((event, error.reason, error.detail))
                    _trace(event, decoding, None, error.reason)
                    return
                if (where := route(event.message.key, item.session_key)) is not None:
                    batch.forwards.append((event, where))
                    return
                if was_forwarded(event):
                    item = Forwarded(item)
                key = item.session_key
                batch.broker_wait_ms.append(max(0.0, time.time() - event.message.timestamp) * 1000)
            computing = time.perf_counter()
            batch.decode_ms += (computing - decoding) * 1000
            step = self._apply(batch, key, item)
            batch.core_ms += ms_since(computing)
        except Exception as error:  # noqa: BLE001 - one bad event must not take the batch (or the worker) down
            log.exception("event at %s/%s failed; dead-lettered%s", event.message.partition, event.message.offset,
                          "" if key is None else ", its session's state rebuilt without it",
                          extra=record_fields(event.message, key))
            batch.dead.append((event, "internal", repr(error)))
            if key is not None:
                self._rebuild(batch, key)
            return
        _trace(event, decoding, computing)
        if step is None:
            if isinstance(item, PopRequest):  # nothing to take back; a summary is just dropped
                batch.dead.append((event, "pop", f"session {key} has no state here (never written, or erased)"))
            return  # a summary or a pop for a session this worker has no state of
        batch.inputs[key].append(item)
        batch.last_event[key] = event
        if step.outcome == "duplicate":
            turn_id = item.turn_id if isinstance(item, Turn) else None
            log.debug("turn %s at %s/%s seen already: replay skipped", turn_id, event.message.partition,
                      event.message.offset, extra=record_fields(event.message, key, turn_id))
        if step.dead_letter is not None:
            batch.dead.append((event, *step.dead_letter))
        batch.steps.append(step)
        batch.carried.append(carried(event.message.headers))
        if parent := traceparent(event.message.headers):
            batch.traceparents.append(parent)

    def _apply(self, batch: Batch, key: str, item: Input) -> Step | None:
        state = batch.states.get(key)  # a session this batch holds is neither erased nor to be read again
        if state is None:
            raw = self.sessions.get(key)
            if key in batch.forgotten or is_forget_marker(raw):
                turns_total.labels("forgotten").inc()
                return None  # erased: a replay or a late turn must not bring it back
            if raw is not None:
                state = SessionState.restore(raw)
            elif isinstance(item, (SummaryResult, PopRequest)):
                return None  # a summary or a pop for a session this worker has no state of
            else:
                state = self.core.new_state(item)
            batch.states[key] = state
        if isinstance(item, SummaryResult):
            return self.core.on_summary(state, item, time.time())
        if isinstance(item, PopRequest):
            return self.core.on_pop(state, item)
        return self.core.on_turn(state, item, time.time())

    @staticmethod
    def _forget(batch: Batch, event: EventT, request: ForgetRequest) -> None:
        """Drop everything this batch did for the session so far; its row becomes a forget marker."""
        key = request.session_key
        batch.forgotten[key] = (event, request)
        for part in (batch.states, batch.inputs, batch.last_event):
            part.pop(key, None)
        batch.steps = [step for step in batch.steps if step.session_key != key]

    def _rebuild(self, batch: Batch, key: str) -> None:
        """The session's state as the Table has it plus this batch's earlier inputs, which are applied again
        (the core is deterministic): an event that failed half-way leaves no trace in it."""
        batch.states.pop(key, None)
        for item in batch.inputs[key]:
            self._apply(batch, key, item)


def _trace(event: EventT, decoding: float, computing: float | None, error: str | None = None) -> None:
    """Spans of one event: processing it, with decode and (unless it was refused) compaction inside."""
    if not recording():
        return
    message, done = event.message, time.perf_counter()
    parent = record_span(f"process {message.topic}", decoding, done, traceparent(message.headers),
                         kafka_attributes(message.topic, message.partition, message.offset, message.key), error=error,
                         kind="CONSUMER")
    record_span("turnstream.decode", decoding, computing or done, parent, error=error)
    if computing is not None:
        record_span("turnstream.compaction", computing, done, parent)
