"""A stream read passively, each event through a processor of ours, as Faust's `take_events` reads one.

Relies on `faust.Stream._enable_passive` (reads the channel into the processors without an `async for`) and
`Stream._processors` (Faust removes no processor): take_batches (streams/batches.py) fills its batches from
the processor and hands them over itself.
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
