"""The embedding model in a process of its own, at a lower CPU priority than the worker.

In a thread of the worker the model shared the worker's GIL and its core: after a burst, while the embedder worked
through the archived backlog, the context a gateway reads waited behind it (freshness p99 went from 15 ms to
seconds on one core). In a child process at a higher niceness it takes no GIL the event loop needs, and the
kernel gives a core to the worker first: the context stays fresh, and the vectors come with the CPU left over.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import os
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool

from turnstream.embeddings.base import EmbeddingError
from turnstream.embeddings.factory import Embedders, load_embedders
from turnstream.embeddings.turns import embed_entries
from turnstream.schemas.archive import ArchiveEntry, EmbeddedTurn
from turnstream.settings import Settings
from turnstream.stack.services import die_with_parent

NICENESS = 10
"""How much lower than the worker the embedding process runs: the kernel's weight for nice 10 is about a tenth of
nice 0's, so on a core the two share the worker gets ~90 % when both are busy, and the embedder all that is idle."""

_embedders: Embedders | None = None
"""The child's own models, loaded by `_start` (a process pool worker has no other place to keep them)."""


def _start(settings: Settings) -> None:
    global _embedders
    die_with_parent()  # a worker killed with -9 leaves no model process behind
    os.nice(NICENESS)
    _embedders = load_embedders(settings)


def _embed(entries: Sequence[ArchiveEntry], terms: int) -> list[EmbeddedTurn]:
    assert _embedders is not None, "the embedding process starts by loading its models"
    return embed_entries(_embedders, entries, terms)


class EmbeddingProcess:
    """One child process that embeds archived turns with the settings' models (`embed_entries`, off the worker's
    event loop and GIL). Started on the first call (or by `start`), stopped by `close`."""

    def __init__(self, settings: Settings) -> None:
        # spawn, not fork: the worker has threads (Faust's, ONNX Runtime's, the tokenizer's) that a fork would copy
        # in whatever state they are in
        self._pool = ProcessPoolExecutor(
            1, mp_context=multiprocessing.get_context("spawn"), initializer=_start, initargs=(settings,)
        )

    async def embed(self, entries: Sequence[ArchiveEntry], terms: int) -> list[EmbeddedTurn]:
        """The semantic side of `entries` (embed_entries), computed in the child."""
        try:
            return await asyncio.get_running_loop().run_in_executor(self._pool, _embed, list(entries), terms)
        except BrokenProcessPool:
            raise EmbeddingError("the embedding process died (its models failed to load, or it was killed)") from None
        except RuntimeError as error:  # submitted after close(): the worker is stopping
            raise EmbeddingError(f"the embedding process is stopped: {error}") from None

    async def start(self) -> None:
        """Start the child and load its models now, so the first batch does not wait for them."""
        await self.embed([], 0)

    def close(self) -> None:
        """Stop the child; a batch it is embedding is dropped (its journal records are read again after a restart)."""
        self._pool.shutdown(wait=False, cancel_futures=True)
