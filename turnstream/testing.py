"""In-memory stand-ins for testing code around the session core without Kafka or Redis (docs/testing.md).

What the session agent reads and writes, each kept in memory: consumed records (`record`, `turn_value`,
`conversation`), the sessions Table and one model sink per stage of the executor's PLAN, each storing its
effects in a `World` the way the real store does (keyed, compare-and-set). A test can fail any stage, replay
the batch with a new executor (as the partition's next owner would), and compare what is stored with a run
that never failed.

Importing it needs the worker extra (the executor's sinks are the Faust agent's), but no broker, no Redis and
no test framework.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import orjson

from turnstream.agents.batch import Batch, Stepper, Tombstones
from turnstream.agents.envelope import Consumed
from turnstream.agents.executor import PLAN, Executor, Sinks
from turnstream.agents.sinks import ArchiveSink, ContextSink, Done
from turnstream.errors import TurnstreamError
from turnstream.schemas.control import forget_marker, forget_record
from turnstream.schemas.memory import Memory
from turnstream.session import CoreConfig, LiveStates, Loaded, SessionCore, SessionState, loaded_from_row
from turnstream.settings import Settings

TURNS = "t.turns"
"""The turns topic the records come from by default."""
SUMMARIES = "t.summaries"
"""The summaries topic the executor's stepper is told of."""
NOW = 1_700_000_000.0
"""The time every record and turn is stamped with (turn n at NOW + n)."""


@dataclass(frozen=True)
class FakeMessage:
    """A consumed record, as much of one as the session agent reads (Faust's Message)."""

    topic: str
    partition: int
    offset: int
    key: bytes | None
    value: bytes | None
    """The record's bytes; None for a tombstone."""
    headers: list[tuple[str, bytes]]
    timestamp: float
    """Epoch seconds the record was produced at."""


@dataclass(frozen=True)
class FakeEvent:
    """A consumed event (Faust's Event): its record."""

    message: FakeMessage


def record(
    value: bytes | None,
    key: bytes | None,
    offset: int,
    headers: list[tuple[str, bytes]] | None = None,
    topic: str = TURNS,
) -> FakeEvent:
    """A consumed event as the agent sees one, on partition 0 at `offset`."""
    return FakeEvent(FakeMessage(topic, 0, offset, key, value, headers or [], NOW))


def turn_value(session: str, n: int, content: str, role: str = "user", turn_id: str | None = None) -> bytes:
    """The turns topic's value of turn `n` of `session` (user "maya", `seq` n)."""
    return orjson.dumps(
        {
            "turn_id": turn_id or f"{session}-{n}",
            "session_id": session,
            "user_id": "maya",
            "seq": n,
            "ts": NOW + n,
            "message": {"role": role, "content": content},
        }
    )


def conversation() -> list[FakeEvent]:
    """A batch with a bit of everything: two sessions, a refused record, a misrouted turn, an erased session."""
    values: list[tuple[bytes | None, bytes | None]] = [
        (turn_value("s1", 0, "My budget is 3500 EUR for Lisbon."), b"s1"),
        (turn_value("s2", 0, "I prefer window seats."), b"s2"),
        (b"not json", b"s1"),
        (turn_value("s1", 1, "Noted: 3500 EUR, Lisbon.", role="assistant"), b"s1"),
        (turn_value("s3", 0, "keyed wrong"), b"elsewhere"),
        (None, b"s1"),
        (forget_record("s2", NOW), b"s2"),
        (turn_value("s2", 1, "a late turn of an erased session"), b"s2"),
        (turn_value("s1", 2, "I also hate early flights."), b"s1"),
    ]
    return [record(value, key, offset) for offset, (value, key) in enumerate(values)]


class StageFailed(TurnstreamError, RuntimeError):
    """What a model sink raises when its World says its stage fails."""


@dataclass
class World:
    """Everything the stages store, as the real stores would keep it; `fail_at` names a stage that fails."""

    rows: dict[str, bytes] = field(default_factory=dict)
    """The sessions Table: session key -> its row (a snapshot, or a forget marker)."""
    contexts: dict[str, int] = field(default_factory=dict)
    """Session key -> the stored document's version (writes compare-and-set on it)."""
    memories: dict[tuple[str, str], Memory] = field(default_factory=dict)
    """(owner, memory id) -> the memory."""
    archive: dict[str, set[str]] = field(default_factory=dict)
    """Owner -> the ids of its archived turns."""
    journal: dict[bytes, bytes | None] = field(default_factory=dict)
    """The memory journal: key -> b"m" for a memory, b"a" for an archived turn."""
    dead: list[tuple[int, str]] = field(default_factory=list)
    """Dead letters: (offset, reason)."""
    forwarded: list[bytes] = field(default_factory=list)
    """The keys misrouted turns were forwarded under."""
    rounds: list[str] = field(default_factory=list)
    """Turn ids of the held turns sent round again."""
    confirmed: set[str] = field(default_factory=set)
    """Sessions whose erasure was confirmed."""
    summary_requests: list[str] = field(default_factory=list)
    """Session keys of the LLM summary requests sent."""
    written: list[str] = field(default_factory=list)
    """The stages that stored their effects, in order."""
    acknowledged: list[int] = field(default_factory=list)
    """Offsets of the acknowledged records, in order."""
    fail_at: str | None = None
    """The stage of PLAN whose sink raises StageFailed (None: none fails)."""

    def stored(self) -> dict[str, Any]:
        """What a reader can see, duplicates of at-least-once sends set aside."""
        states = {
            key: (SessionState.restore(row).version if not row.startswith(b'{"forgotten_at"') else "erased")
            for key, row in self.rows.items()
        }
        return {
            "rows": states,
            "contexts": self.contexts,
            "memories": set(self.memories),
            "archive": self.archive,
            "journal": self.journal,
            "dead": set(self.dead),
            "forwarded": set(self.forwarded),
            "rounds": set(self.rounds),
            "confirmed": self.confirmed,
        }

    async def acknowledge(self, events: Sequence[Consumed]) -> None:
        """The executor's acknowledgement of a stored batch."""
        self.acknowledged += [event.message.offset for event in events]


class RowLoader:
    """The state loader over the World's rows (what TableStates does over the Table)."""

    def __init__(self, world: World) -> None:
        self.world = world

    def load(self, key: str) -> Loaded:
        return loaded_from_row(self.world.rows.get(key))


@dataclass
class ModelSink:
    """One stage's sink: stores the batch's effects of its kind in the World, or fails when told to."""

    world: World
    stage: str
    """Its stage of PLAN."""

    async def write(self, batch: Batch, done: Done) -> None:
        if self.world.fail_at == self.stage:
            raise StageFailed(self.stage)
        getattr(self, f"_{self.stage}")(batch)
        self.world.written.append(self.stage)

    def _dead_letter(self, batch: Batch) -> None:
        self.world.dead += [(envelope.event.message.offset, reason) for envelope, reason, _ in batch.dead]

    def _forward(self, batch: Batch) -> None:
        self.world.forwarded += [envelope.forward.key for envelope in batch.forwards if envelope.forward]

    def _release(self, batch: Batch) -> None:
        self.world.rounds += [turn.turn_id for turn in batch.released]

    def _memory(self, batch: Batch) -> None:
        for step, _ in batch.steps:
            self.world.memories.update({(step.owner, memory.id): memory for memory in step.memories})

    def _redis(self, batch: Batch) -> None:
        for owner, entries in ArchiveSink.appends(batch).items():
            self.world.archive.setdefault(owner, set()).update(entry.id for entry in entries)
        changed, _ = ContextSink.changed(batch)
        for key, state in changed.items():
            if state.version > self.world.contexts.get(key, -1):  # the compare-and-set
                self.world.contexts[key] = state.version

    def _journal(self, batch: Batch) -> None:
        for step, _ in batch.steps:
            self.world.journal.update({memory.id.encode(): b"m" for memory in step.memories})
            self.world.journal.update({entry.id.encode(): b"a" for entry in step.archive})

    def _table(self, batch: Batch) -> None:
        for key, row, _ in batch.sessions.rows():
            self.world.rows[key] = row.snapshot() if isinstance(row, SessionState) else forget_marker(row.requested_at)

    def _forget(self, batch: Batch) -> None:
        self.world.confirmed |= set(batch.sessions.forgotten)

    def _summary_request(self, batch: Batch) -> None:
        self.world.summary_requests += [step.session_key for step, _ in batch.steps if step.summary_request]


def executor(world: World, **settings: Any) -> Executor:
    """An executor as a worker builds one (a new owner of the partition builds a new one), over model sinks that
    store in `world`; `settings` are Settings fields over a budget of 300 tokens."""
    configured = Settings(**{"budget_tokens": 300, **settings})
    core = SessionCore(CoreConfig.from_settings(configured))
    live = LiveStates(RowLoader(world), lambda key: 0, configured.live_states_max, configured.live_states_idle_seconds)
    stepper = Stepper(SUMMARIES, 256 * 1024, live, core, Tombstones())
    return Executor(stepper, Sinks(**{stage: ModelSink(world, stage) for stage in PLAN}))
