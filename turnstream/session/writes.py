"""What a batch's steps ask of Redis and of the memory journal, grouped per owner or per session (pure): the
sinks (agents/sinks.py) send what these return, each in one call."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence

from turnstream.schemas.archive import ArchiveEntry
from turnstream.schemas.journal import Kind, archive_record, journal_key, memory_record
from turnstream.schemas.memory import Memory
from turnstream.session.core import Step
from turnstream.session.state import SessionState

JournalWrite = tuple[str, bytes, bytes | None]
"""(owner, key, value) of one memory journal record; a None value is a tombstone."""

MemoryWrites = dict[str, tuple[list[Memory], list[str]]]
"""Per owner: the memories to upsert, in step order, and the texts to append to the profile."""


def memory_writes(steps: Iterable[Step]) -> MemoryWrites:
    """Each owner's memories and profile additions from `steps`, in order. A memory written again later in the
    batch with another text (a correction of a fact stated in the same batch) adds only its last text to the
    profile: the store removes a rewritten memory's old line, but only the line it already holds."""
    writes: defaultdict[str, tuple[list[Memory], list[str]]] = defaultdict(lambda: ([], []))
    for step in steps:
        if step.memories:
            writes[step.owner][0].extend(step.memories)
            writes[step.owner][1].extend(step.profile_additions)
    for memories, additions in writes.values():
        last = {memory.id: memory.text for memory in memories}
        superseded = {memory.text for memory in memories if last[memory.id] != memory.text} - set(last.values())
        additions[:] = [text for text in additions if text not in superseded]
    return dict(writes)


def archive_appends(steps: Iterable[Step]) -> dict[str, list[ArchiveEntry]]:
    """Each owner's archive entries, in step order; owners with none left out."""
    archived: defaultdict[str, list[ArchiveEntry]] = defaultdict(list)
    for step in steps:
        archived[step.owner] += step.archive
    return {owner: entries for owner, entries in archived.items() if entries}


def changed_contexts(
    steps: Iterable[Step], states: Mapping[str, SessionState]
) -> tuple[dict[str, SessionState], dict[str, list[str]]]:
    """The sessions whose context document must be written, and the turn ids each applied in the batch (none for
    one a summary or a duplicate changed)."""
    applied: defaultdict[str, list[str]] = defaultdict(list)
    changed: dict[str, SessionState] = {}
    for step in steps:
        if step.applied_turn_id:
            applied[step.session_key].append(step.applied_turn_id)
        if step.context_changed:
            changed[step.session_key] = states[step.session_key]
    return changed, {key: applied.get(key, []) for key in changed}


def journal_writes(
    steps: Sequence[Step],
    created: Mapping[str, Mapping[str, float]],
    evicted_memories: Mapping[str, list[str]],
    evicted_entries: Mapping[str, list[str]],
) -> list[JournalWrite]:
    """The batch's memory and archive writes as journal records, each memory with its created_at as Redis keeps it
    (`created`, per owner: a rebuild must not date a corrected memory by its correction), then tombstones for what
    the caps evicted, after the records they may follow."""
    writes: list[JournalWrite] = []
    for step in steps:
        kept = created.get(step.owner, {})
        for memory in step.memories:
            memory = memory.model_copy(update={"created_at": kept.get(memory.id, memory.created_at)})
            writes.append((step.owner, *memory_record(memory)))
        writes += [(step.owner, *archive_record(step.owner, entry)) for entry in step.archive]
    evicted: tuple[tuple[tuple[Kind, ...], Mapping[str, list[str]]], ...] = (
        (("m",), evicted_memories),
        (("a", "v"), evicted_entries),
    )  # an entry goes with its vector
    for kinds, owners in evicted:
        writes += [
            (owner, journal_key(kind, owner, evicted_id), None)
            for owner, ids in owners.items()
            for evicted_id in ids
            for kind in kinds
        ]
    return writes
