"""Faust's consumer with what it delivers decided by a policy of ours (kafka/delivery_policy.py's OrderedDelivery):
which fetched records reach the streams, which acknowledgements count, and what a seek, a rebalance and a
partition's end offsets mean to the policy. Nothing is decided here; every override hands over to the policy.

Relies on (faust-streaming, `faust.transport.consumer.Consumer`): `getmany` (the fetch loop's source of
records, an internal generator), `seek_to_committed` (what the recovery after each rebalance calls), `seek`,
`ack`, `on_partitions_revoked` / `on_partitions_assigned` (its rebalance callbacks, called before Faust's own
handling), `highwaters` (what Table recovery reads up to), and mode's `Service.timer` on a consumer.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Mapping
from typing import Any, Literal, Protocol, cast

from faust.types import TP, Message
from mode import Service

from turnstream.kafka.faust_private.app import ConsumerApp
from turnstream.kafka.faust_private.consumer import Consumer

Verdict = Literal["deliver", "drop", "hold"]
"""What becomes of a fetched record of a guarded partition: handed over, dropped, or held back with the rest of
its partition's fetched records (the policy sought the partition back)."""


class DeliveryPolicy(Protocol):
    """What PolicedConsumer asks of the policy, at each of the consumer's hooks."""

    def guarded(self, tp: TP) -> bool:
        """Whether the policy decides the records of `tp` (others are delivered as Faust fetches them)."""
        ...

    def sought(self, tp: TP, offset: int | None) -> None:
        """`tp` is about to be sought to `offset` (None or negative: wherever the partition starts)."""
        ...

    async def committed(self, committed: Mapping[TP, int]) -> None:
        """Every partition was just sought to its committed offset (after each rebalance)."""
        ...

    def revoked(self, revoked: set[TP]) -> None: ...

    def assigned(self) -> None:
        """A new assignment begins: nothing of the previous one carries over."""
        ...

    async def end_offsets(self, highwaters: Mapping[TP, int]) -> Mapping[TP, int]:
        """The end offsets Table recovery reads up to, from the broker's `highwaters`."""
        ...

    def counts(self, message: Message) -> bool:
        """Whether an acknowledgement of `message` may move the commit."""
        ...

    async def admit(self, tp: TP, offset: int) -> Verdict: ...

    async def tick(self) -> None:
        """Once a second while the consumer runs."""
        ...


class PolicedApp(ConsumerApp):
    """A ConsumerApp whose consumer is a PolicedConsumer, its policy made by `delivery_policy`."""

    delivery_policy: Callable[[PolicedConsumer], DeliveryPolicy]


class PolicedConsumer(Consumer):
    """Faust's aiokafka consumer (faust_private.consumer) handing each delivery decision to `policy`."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.policy = cast(PolicedApp, self.app).delivery_policy(self)

    async def seek_to_committed(self) -> Mapping[TP, int]:
        committed = await super().seek_to_committed()
        await self.policy.committed(committed)
        return committed

    async def seek(self, partition: TP, offset: int) -> None:
        # the policy first: a record fetched from the new position before the seek returns is delivered
        self.policy.sought(partition, offset)
        await super().seek(partition, offset)

    async def on_partitions_revoked(self, revoked: set[TP]) -> None:
        self.policy.revoked(revoked)
        await super().on_partitions_revoked(revoked)

    async def on_partitions_assigned(self, assigned: set[TP], generation_id: int = 0) -> None:
        self.policy.assigned()
        await super().on_partitions_assigned(assigned, generation_id)

    async def highwaters(self, *partitions: TP) -> Mapping[TP, int]:
        return await self.policy.end_offsets(await super().highwaters(*partitions))

    def ack(self, message: Message) -> bool:
        return self.policy.counts(message) and super().ack(message)

    @Service.timer(1.0)
    async def _policy_tick(self) -> None:
        await self.policy.tick()

    async def getmany(self, timeout: float) -> AsyncIterator[tuple[TP, Message]]:
        held: set[TP] = set()
        async for tp, message in super().getmany(timeout):
            if tp in held:
                continue
            if not self.policy.guarded(tp):
                yield tp, message
                continue
            verdict = await self.policy.admit(tp, message.offset)
            if verdict == "deliver":
                yield tp, message
            elif verdict == "hold":
                held.add(tp)  # the partition was sought back: the rest of this batch comes again
