"""The embedding models in a process of their own, at a lower CPU priority than the worker.

In a thread of the worker the model shared the worker's GIL and its core: after a burst, while the embedder worked
through the archived backlog, the context a gateway reads waited behind it (freshness p99 in seconds, on one core:
tools/turnstream_tools/benchmarks/HISTORY.md, 2026-12-04). In a child process at a higher niceness it takes no GIL the
event loop needs, and the kernel gives the core to the worker first: the context stays fresh, and the vectors
come with the CPU left over. The models are loaded in the child only, so the worker's memory holds them once.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import os
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool

from turnstream.embeddings.base import EmbeddingError
from turnstream.embeddings.factory import Embedders, ModelIds, load_embedders
from turnstream.embeddings.turns import embed_entries
from turnstream.schemas.archive import ArchiveEntry, EmbeddedTurn
from turnstream.settings import Settings
from turnstream.stack.services import die_with_parent

NICENESS = 10
"""How much lower than the worker the embedding process runs: the kernel's weight for nice 10 is about a tenth of
nice 0's, so on a core the two share the worker gets ~90 % when both are busy, and the embedder all that is idle."""

_embedders: Embedders | None = None
"""The child's models, loaded by `_load` (a process pool's worker has no other place to keep them)."""


def _lower_priority(worker: int) -> None:
    die_with_parent()  # a worker killed with -9 leaves no model process behind
    if os.getppid() != worker:  # it died before the line above: no signal will come
        os._exit(1)
    os.nice(NICENESS)


def _load(settings: Settings) -> ModelIds:
    global _embedders
    _embedders = load_embedders(settings)
    if _embedders is None:
        raise EmbeddingError("TURNSTREAM_EMBEDDINGS is off: there is no model to load")
    return _embedders.ids()


def _embed(entries: Sequence[ArchiveEntry], terms: int) -> list[EmbeddedTurn]:
    assert _embedders is not None, "EmbeddingProcess.load runs first"
    return embed_entries(_embedders, entries, terms)


class EmbeddingProcessDied(EmbeddingError):
    """The child died under a batch (killed, or out of memory): `EmbeddingProcess.restart` starts another."""

    def __init__(self, generation: int) -> None:
        super().__init__("the embedding process died (killed, or out of memory)")
        self.generation = generation
        """Which child died (EmbeddingProcess.generation when the batch was given to it)."""


class EmbeddingProcess:
    """One child process holding the settings' models and embedding archived turns with them (`embed_entries`),
    off the worker's event loop and GIL: `load` at start, then `embed` per batch (`restart` when its child died),
    `close` at the end."""

    def __init__(self, settings: Settings) -> None:
        self._settings = settings
        self._pool = self._new_pool()
        self._restarting = asyncio.Lock()
        self.models: ModelIds | None = None
        """The loaded models' ids, once `load` has run."""
        self.generation = 0
        """How many children died and were replaced."""

    @staticmethod
    def _new_pool() -> ProcessPoolExecutor:
        # spawn, not fork: the worker has threads (Faust's, the tokenizer's) a fork would copy in whatever state
        return ProcessPoolExecutor(
            1, mp_context=multiprocessing.get_context("spawn"), initializer=_lower_priority, initargs=(os.getpid(),)
        )

    def load(self) -> ModelIds:
        """Start the child and load and check the models in it; blocks, so call it at start. EmbeddingError (one
        line) when a model is missing or broken."""
        try:
            self.models = self._pool.submit(_load, self._settings).result()
        except BrokenProcessPool:
            raise EmbeddingError("the embedding process died while loading its models") from None
        return self.models

    async def embed(self, entries: Sequence[ArchiveEntry], terms: int) -> list[EmbeddedTurn]:
        """The semantic side of `entries` (embed_entries), computed in the child; EmbeddingProcessDied when the
        child dies under them."""
        async with self._restarting:  # a child being started has no models yet: wait for it
            pool, generation = self._pool, self.generation
        try:
            return await asyncio.get_running_loop().run_in_executor(pool, _embed, list(entries), terms)
        except BrokenProcessPool:
            raise EmbeddingProcessDied(generation) from None
        except RuntimeError as error:  # submitted after close(): the worker is stopping
            raise EmbeddingError(f"the embedding process is stopped: {error}") from None

    async def restart(self, died: EmbeddingProcessDied) -> None:
        """A new child with the models loaded, in place of the one that `died`; nothing when another caller has
        replaced it already. EmbeddingError when the new child dies while loading too."""
        async with self._restarting:
            if died.generation != self.generation:
                return
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = self._new_pool()
            self.generation += 1
            await asyncio.to_thread(self.load)

    def close(self) -> None:
        """Stop the child, once the worker stops (an agent restarted by Faust keeps embedding through it); a batch
        it is embedding is dropped (its journal records are read again after a restart)."""
        self._pool.shutdown(wait=False, cancel_futures=True)


def start_embedding(settings: Settings) -> EmbeddingProcess | None:
    """The settings' embedding process, started with its models loaded; None when embeddings are off. A model
    that fails is its one-line EmbeddingError, and the child is stopped before it is raised."""
    if settings.embeddings == "off":
        return None
    process = EmbeddingProcess(settings)
    try:
        process.load()
    except EmbeddingError:
        process.close()
        raise
    return process
