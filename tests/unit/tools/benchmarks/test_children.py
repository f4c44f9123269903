"""The bench's children are stopped by pid on the way out; their logs go with them unless --keep-logs keeps them."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from turnstream_tools.benchmarks.children import Children


def _sleeper(children: Children, name: str) -> Path:
    child = children.command(name, ["sh", "-c", "echo worker ready; exec sleep 30"])
    path = Path(child.log.name)
    deadline = time.monotonic() + 10
    while not path.read_text() and time.monotonic() < deadline:  # what it says before it is stopped
        time.sleep(0.01)
    return path


@pytest.mark.parametrize("keep", [False, True])
def test_a_stopped_childs_log_is_removed_unless_kept(keep: bool) -> None:
    with Children(keep_logs=keep) as children:
        path = _sleeper(children, "worker")
        process = children.started[0].process
        assert children.kept == ({"worker": str(path)} if keep else {})  # known from the start, for a failed run
    assert process.poll() is not None  # stopped by pid on the way out
    assert path.exists() == keep
    if keep:
        assert path.read_text() == "worker ready\n"
        path.unlink()
