"""What a batch's steps ask of each owner's long-term memory, grouped per owner (pure)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

from turnstream.memory.model import Memory
from turnstream.session.core import Step

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
