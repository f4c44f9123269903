"""The embedding process: the worker's models in a child below its priority, answering as the models do in-process,
and a model that cannot load is the child's one-line EmbeddingError at start."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from turnstream.embeddings.base import EmbeddingError
from turnstream.embeddings.factory import load_embedders
from turnstream.embeddings.process import NICENESS, EmbeddingProcess, start_embedding
from turnstream.embeddings.turns import embed_entries
from turnstream.schemas.archive import ArchiveEntry
from turnstream.settings import Settings
from turnstream_tools.benchmarks.pinning import process_tree

pytestmark = pytest.mark.integration

TEXTS = ["I started kickboxing last year", "我去年开始练跆拳道", "We adopted a puppy named Max"]


async def test_the_child_embeds_what_the_worker_would_and_runs_below_it() -> None:
    settings = Settings(embeddings="local")
    entries = [ArchiveEntry(f"e{n}", "s1", n, "user", "Caroline", 1.0, text) for n, text in enumerate(TEXTS)]
    process = EmbeddingProcess(settings)
    try:
        models = process.load()
        below = os.getpriority(os.PRIO_PROCESS, 0) + NICENESS
        children = process_tree(os.getpid())[1:]  # the pool's process, and multiprocessing's resource tracker
        assert [pid for pid in children if os.getpriority(os.PRIO_PROCESS, pid) == below]
        in_child = await process.embed(entries, settings.embedding_expansion_terms)
    finally:
        process.close()
    with pytest.raises(EmbeddingError, match="stopped"):
        await process.embed(entries, settings.embedding_expansion_terms)
    embedders = load_embedders(settings)
    assert embedders is not None and models == embedders.ids()
    assert in_child == embed_entries(embedders, entries, settings.embedding_expansion_terms)
    assert {turn.id for turn in in_child} == {entry.id for entry in entries}


def test_a_model_that_cannot_load_is_an_embedding_error(tmp_path: Path) -> None:
    process = EmbeddingProcess(Settings(embeddings="local", embedding_model_dir=str(tmp_path)))
    try:  # the child's own one-line reason, as `turnstream worker` prints it
        with pytest.raises(EmbeddingError, match=r"no embedding model in .*manifest.json missing"):
            process.load()
    finally:
        process.close()


def test_embeddings_off_start_no_process_and_a_failing_model_leaves_none_running(tmp_path: Path) -> None:
    assert start_embedding(Settings(embeddings="off")) is None
    before = set(process_tree(os.getpid()))
    with pytest.raises(EmbeddingError, match="no embedding model in"):
        start_embedding(Settings(embeddings="local", embedding_model_dir=str(tmp_path)))
    deadline = time.monotonic() + 10  # the pool's shutdown stops its process soon after the call returns
    while left := {pid for pid in set(process_tree(os.getpid())) - before if not _tracker(pid)}:
        assert time.monotonic() < deadline, f"embedding process {left} still running"
        time.sleep(0.1)


def _tracker(pid: int) -> bool:
    """multiprocessing's resource tracker, which outlives a pool by design until this process exits."""
    try:
        return "resource_tracker" in Path(f"/proc/{pid}/cmdline").read_text()
    except FileNotFoundError:
        return False
