"""In-order delivery: the policy by which the worker's consumer hands each input partition's records over one
offset after another (kafka/faust_private/delivery.py's PolicedConsumer asks it at each of Faust's hooks).

Faust's fetch loop reads a jump in a partition's offsets as a gap the broker left (compaction, transaction
markers): it counts the offsets in between as acknowledged and drops them if they arrive later. After
back-to-back rebalances, when the recovery of one assignment resumes fetching while the next rebalance has
already begun and the next recovery seeks the partitions back to their committed offsets, records from
the two fetch positions reach that loop interleaved. The jump is then not a gap but turns that have not
arrived yet: they were skipped for good and their offsets committed, though no worker applied them.

`OrderedDelivery` keeps, per input partition, the next offset to deliver: set by every seek (the
recovery after each rebalance seeks every partition it keeps to its committed offset), advanced by every
delivered record. Until a partition has been sought in its current assignment, none of its records is
delivered (a stale fetch from before the seek could start anywhere); the seeks to the committed offsets
after each rebalance are made once more, each partition's next offset set first, because records fetched
while the first ones were under way were dropped that way, and with no later record to reveal the gap a
partition would wait for them for good. A record behind the next offset
was delivered already and is dropped; a record ahead of it is held back and the partition sought back to
the missing offset, so the loop above only ever sees consecutive offsets. When the broker keeps
answering with the same jump (a real gap: a compacted topic, a transaction marker), the jump is
accepted after a few tries.

In-order fetching is not enough: Faust can still drop a fetched record before the agent gets it (see
intake.py). The session agent therefore takes each record through `take`, which lets a partition's records
through only in offset order from the offset it was sought to, and fetches a partition again from the first
record the agent lacks. Only a record the agent took can be acknowledged: Faust's own acknowledgement of
a record it skipped would otherwise let the commit pass a turn no worker applied.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable, Mapping
from typing import Any
from weakref import WeakSet

from faust.types import TP, AppT, Message

from turnstream.kafka.end_offsets import fetched_end_offsets
from turnstream.kafka.faust_private.delivery import PolicedApp, PolicedConsumer, Verdict
from turnstream.kafka.intake import Intake
from turnstream.metrics import refetches_total

log = logging.getLogger(__name__)

GAP_RETRIES = 3
"""Seeks back to the same missing offset before a jump is taken for a real gap in the partition."""
ANY = -1
"""Next offset of a partition sought to a committed offset it does not have yet: its first record, wherever it starts."""


class OrderedDelivery:
    """The records of each acking topic delivered in offset order, none skipped (the consumer's DeliveryPolicy)."""

    def __init__(self, consumer: PolicedConsumer) -> None:
        self.consumer = consumer
        self._next_offset: dict[TP, int] = {}
        """Per guarded partition, the offset of the next record to deliver; absent until sought in this assignment."""
        self._retries: dict[TP, tuple[int, int]] = {}
        """Per partition, (missing offset, seeks back to it so far)."""
        self._intake: Intake[TP] = Intake()
        self._taken: WeakSet[Message] = WeakSet()
        """The records the agent took in this assignment: the only ones an acknowledgement counts for."""
        self._gated: set[str] = set()
        """Topics whose records reach their agent through `take` (see `gate`)."""

    def guarded(self, tp: TP) -> bool:
        return self.consumer.app.topics.acks_enabled_for(tp.topic) and not self.consumer.is_changelog(tp)

    def sought(self, tp: TP, offset: int | None) -> None:
        self._retries.pop(tp, None)
        self._next_offset[tp] = ANY if offset is None or offset < 0 else offset

    async def committed(self, committed: Mapping[TP, int]) -> None:
        """Seek each input partition once more, its next offset set first: the records fetched while the first
        seeks were under way were dropped (their partition was not sought yet), and nothing else would fetch them
        again."""
        guarded = [tp for tp in committed if self.guarded(tp)]
        earliest = await self.consumer.earliest_offsets(*[tp for tp in guarded if not committed[tp]]) if guarded else {}
        for tp, offset in committed.items():
            if tp in guarded:
                start = offset or earliest.get(tp) or 0
                if tp.topic in self._gated:
                    self._intake.start(tp, start, time.monotonic())
                await self.consumer.seek(tp, start)
            else:
                self.sought(tp, offset)

    def revoked(self, revoked: set[TP]) -> None:
        for tp in revoked:
            self._next_offset.pop(tp, None)
            self._retries.pop(tp, None)

    def assigned(self) -> None:
        # nothing carries over from the previous assignment: the recovery seeks every partition it keeps,
        # and until then a partition's records are not delivered
        self._next_offset.clear()
        self._retries.clear()
        self._intake.clear()
        self._taken = WeakSet()  # a batch of the previous assignment still running is applied again, not committed

    async def end_offsets(self, highwaters: Mapping[TP, int]) -> Mapping[TP, int]:
        """End offsets confirmed by a fetch (see end_offsets): table recovery reads up to these."""
        app = self.consumer.app
        assert isinstance(app, App)
        return await fetched_end_offsets(app.kafka_options, highwaters)

    def gate(self, topics: Iterable[str]) -> None:
        """The records of `topics` reach their agent through `take`: only those it took are acknowledged."""
        self._gated.update(topics)

    async def take(self, message: Message) -> bool:
        """Whether the agent may apply `message`: the next record of its partition (see intake.py). When
        records before it were lost on the way, its partition is fetched again from the first of them."""
        verdict = self._intake.take(message.tp, message.offset, time.monotonic())
        if verdict.fetch_from is not None:
            log.warning(
                "%s: records from %d on never reached the agent (it got %d); fetching them again",
                message.tp,
                verdict.fetch_from,
                message.offset,
            )
            refetches_total.labels("gap").inc()
            await self.consumer.seek(message.tp, verdict.fetch_from)
        if verdict.taken:
            self._taken.add(message)
        return verdict.taken

    def counts(self, message: Message) -> bool:
        # Faust acknowledges a record its stream skips (flow suspended, older generation): for a topic whose
        # agent takes records through `take`, only what it took may move the commit
        return message.topic not in self._gated or message in self._taken

    async def tick(self) -> None:
        """Fetch a partition again when its fetch is past what the agent took and the agent has taken nothing
        for a while: its last fetched records were lost on the way, and no later record shows the gap."""
        if self.consumer.app.rebalancing or not self.consumer.flow_active:
            return
        fetched = {tp: offset for tp, offset in self._next_offset.items() if offset != ANY}
        for tp, offset in self._intake.stalled(fetched, time.monotonic()).items():
            log.warning(
                "%s: records from %d on were fetched but never reached the agent; fetching them again", tp, offset
            )
            refetches_total.labels("stalled").inc()
            await self.consumer.seek(tp, offset)

    async def admit(self, tp: TP, offset: int) -> Verdict:
        expected = self._next_offset.get(tp)
        if expected is None:
            log.debug("%s: dropped record %d, fetched before the partition was sought", tp, offset)
            return "drop"
        if expected == ANY or offset == expected:
            self._next_offset[tp] = offset + 1
            self._retries.pop(tp, None)
            return "deliver"
        if offset < expected:
            log.debug("%s: dropped record %d, delivered already (next is %d)", tp, offset, expected)
            return "drop"
        missing, tries = self._retries.get(tp, (expected, 0))
        if missing == expected and tries >= GAP_RETRIES:
            log.info("%s: offsets %d..%d are not in the partition; going on from %d", tp, expected, offset - 1, offset)
            self._intake.real_gap(tp, expected, offset)
            self._next_offset[tp] = offset + 1
            self._retries.pop(tp, None)
            return "deliver"
        log.warning("%s: record %d arrived before %d; seeking back to %d", tp, offset, expected, expected)
        await self.consumer.seek(tp, expected)
        self._retries[tp] = (expected, tries + 1 if missing == expected else 1)
        return "hold"


class App(PolicedApp):
    """faust.App whose consumer delivers input records in offset order (OrderedDelivery), waits at the broker for
    `fetch_wait_ms` (faust_private.consumer) and recovers tables up to fetched end offsets."""

    consumer_class = PolicedConsumer
    delivery_policy = OrderedDelivery
    kafka_options: dict[str, Any] = {}
    """aiokafka connection options (bootstrap servers, security) for the clients the consumer opens itself."""


def ordered_delivery(app: AppT) -> OrderedDelivery:
    """The delivery policy of `app`'s consumer, for the agent that gates its topics through it."""
    consumer = app.consumer
    assert isinstance(consumer, PolicedConsumer) and isinstance(consumer.policy, OrderedDelivery)
    return consumer.policy
