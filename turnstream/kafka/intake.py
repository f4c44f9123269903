"""What the agent took of each input partition: the offset it must take next, and the records it never got.

Between the fetch and the agent, Faust can drop records it has fetched: resuming the flow after a table
recovery empties the agents' input queues (records delivered while the partitions were being sought to
their committed offsets go with them), and a stream skips, and acknowledges, a record it reads while the
flow is suspended. The fetch saw those records go by, so nothing fetches them again: the partition goes on
without them or, when they were its last records, waits for them for good. Only what the agent took is a
trustworthy record of what it applied. `Intake` keeps it per partition: a record is taken only if it is
the next one. A record ahead of it means the ones between were lost on the way; so does a partition whose
fetch has moved past what the agent took while the agent took nothing at all for STALL_SECONDS (its input
queue is empty, so those records are nowhere on their way). Either way the partition must be fetched again
from the first record the agent lacks. Pure bookkeeping over offsets: the consumer (delivery.py) seeks.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from dataclasses import dataclass, field
from typing import Generic, NamedTuple, TypeVar

P = TypeVar("P", bound=Hashable)
STALL_SECONDS = 10.0
"""How long the agent takes nothing before the records fetched past what it took count as lost."""
ASK_AGAIN_SECONDS = 1.0
"""How long the same gap waits before it asks for its records again: the records queued behind a gap all
show it, and must not each send the partition back."""


class Taken(NamedTuple):
    taken: bool
    fetch_from: int | None = None
    """Where the partition must be fetched again from, when records before this one were lost."""


@dataclass
class _Partition:
    next_offset: int
    gaps: dict[int, int] = field(default_factory=dict)
    """Gaps of the partition itself (compaction, transaction markers): first missing offset -> next record."""
    asked: int | None = None
    asked_at: float = 0.0


class Intake(Generic[P]):
    """Per partition, the offset of the record the agent must take next."""

    def __init__(self) -> None:
        self._partitions: dict[P, _Partition] = {}
        self._progress_at = 0.0
        """When the agent last took a record (or a partition started, or stalled ones were fetched again)."""

    def start(self, partition: P, offset: int, now: float) -> None:
        """The agent takes the partition's records from `offset` on (where the partition was sought to)."""
        self._partitions[partition] = _Partition(offset)
        self._progress_at = now

    def clear(self) -> None:
        """A new assignment: nothing is taken until each partition starts again."""
        self._partitions.clear()

    def real_gap(self, partition: P, missing: int, present: int) -> None:
        """The fetch found offsets `missing`..`present`-1 absent from the partition itself: no record was lost."""
        if (state := self._partitions.get(partition)) is not None:
            state.gaps[missing] = present

    def take(self, partition: P, offset: int, now: float) -> Taken:
        """Whether the agent takes the record at `offset`: only if it is the partition's next one (or the
        first after a real gap). A record ahead of that asks for the partition's missing records, once per
        ASK_AGAIN_SECONDS; a record of a partition not started, or taken already, is not taken."""
        state = self._partitions.get(partition)
        if state is None or offset < state.next_offset:
            return Taken(False)
        if offset > state.next_offset and state.gaps.get(state.next_offset) != offset:
            missing = state.next_offset
            if state.asked == missing and now - state.asked_at < ASK_AGAIN_SECONDS:
                return Taken(False)
            state.asked, state.asked_at = missing, now
            return Taken(False, missing)
        state.gaps.pop(state.next_offset, None)
        state.next_offset, state.asked = offset + 1, None
        self._progress_at = now
        return Taken(True)

    def stalled(self, fetched: Mapping[P, int], now: float) -> dict[P, int]:
        """Once the agent has taken nothing for STALL_SECONDS, the partitions whose fetch (`fetched`: the offset
        it delivers next) is past what the agent took: the offset each must be fetched again from. A busy
        agent never stalls: a partition whose last records were lost waits for the next lull, or for its
        next record to show the gap."""
        if now - self._progress_at < STALL_SECONDS:
            return {}
        lost = {
            partition: state.next_offset
            for partition, state in self._partitions.items()
            if fetched.get(partition, state.next_offset) > state.next_offset
        }
        if lost:
            self._progress_at = now  # fetched again: give those records a full interval to arrive
        return lost
