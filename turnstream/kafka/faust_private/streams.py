"""A stream read passively, each event through a processor of ours, as Faust's `take_events` reads one, and
acknowledged by its reader rather than by Faust.

Relies on `faust.Stream._enable_passive` (reads the channel into the processors without an `async for`),
`Stream._processors` (Faust removes no processor) and `Stream.enable_acks` (read at each event, not only when
the stream is made): take_batches (kafka/batches.py) fills its batches from the processor, hands them over
itself and leaves their acknowledgement to its caller.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from faust.types import StreamT


@contextmanager
def processed_passively(stream: StreamT[Any], processor: Callable[[Any], Any]) -> Iterator[None]:
    """Run every value of `stream` through `processor` while the block runs; the processor is removed after."""
    stream.add_processor(processor)
    stream._enable_passive(aiter(stream.channel))  # type: ignore[attr-defined]  # private: Stream's, not on StreamT
    try:
        yield
    finally:
        stream._processors.remove(processor)  # type: ignore[attr-defined]  # private: Stream's, not on StreamT


@contextmanager
def acknowledged_by_caller(stream: StreamT[Any]) -> Iterator[None]:
    """While the block runs, Faust acknowledges none of `stream`'s events: the caller acknowledges each batch
    once its effects are stored (`Stream.ack`). The stream's own setting is put back after."""
    acks = stream.enable_acks
    stream.enable_acks = False
    try:
        yield
    finally:
        stream.enable_acks = acks
