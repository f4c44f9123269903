"""Batches of a stream's events, each taken as soon as nothing more is waiting for it.

Faust's `take_events` holds a batch for its whole window unless the batch is full: a turn that arrives
alone waits out the window before anything is done with it, and nothing is taken in while a batch is
being processed. `take_batches` hands a batch over as soon as the stream's input queue is empty (or the
batch is full, or `within` seconds have passed), and fills the next one while the previous is processed,
so the intake's per-event work overlaps the batch's waits on Redis and the broker.

Unlike take_events, which acknowledges a batch when the loop body ends however it ends, nothing here
acknowledges: the caller acknowledges a batch's events once their effects are stored
(`acknowledge`). Events never acknowledged are never committed, so a batch that failed is applied
again by the partition's next owner. An event enters a batch only if the `gate` takes it (the next record
of its partition: see kafka/intake.py).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any, Protocol, cast

from faust import Stream
from faust.types import EventT, Message, StreamT

from turnstream.kafka.faust_private.streams import acknowledged_by_caller, processed_passively


class Gate(Protocol):
    async def take(self, message: Message) -> bool:
        """Whether the record may be applied now."""


async def take_batches(
    stream: StreamT[bytes], max_events: int, within: float, gate: Gate
) -> AsyncIterator[list[EventT[bytes]]]:
    """Lists of 1..`max_events` events of `stream`, in order, until the stream stops."""
    filling: list[EventT[bytes]] = []
    first, ready, room = asyncio.Event(), asyncio.Event(), asyncio.Event()
    waiting = getattr(stream.channel, "queue", None)  # what the input holds beyond the events taken so far

    async def collect(value: Any) -> Any:
        while len(filling) >= max_events:  # full: the stream stops reading until the batch is taken
            room.clear()
            await room.wait()
        event = stream.current_event
        if event is None:
            raise RuntimeError("a stream processor ran without a current event")
        if not await gate.take(event.message):
            return value
        filling.append(event)
        first.set()
        if len(filling) >= max_events or (waiting is not None and waiting.empty()):
            ready.set()
        return value

    running = cast(Stream[bytes], stream)  # Faust's Stream: its Service's wait_for_stopped is not declared on StreamT
    with acknowledged_by_caller(stream), processed_passively(stream, collect):  # as Faust reads it for take_events
        while not stream.should_stop:
            if not filling and await running.wait_for_stopped(first.wait()):
                break
            if not ready.is_set():
                await running.wait_for_stopped(ready.wait(), timeout=within)
            batch = filling[:]
            filling.clear()
            first.clear()
            ready.clear()
            room.set()
            yield batch


async def acknowledge(stream: StreamT[bytes], events: list[EventT[bytes]]) -> None:
    """Mark a batch's events done: their offsets are committed once every earlier one is too."""
    for event in events:
        await stream.ack(event)
