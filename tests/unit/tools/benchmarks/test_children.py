"""The bench's children are stopped by pid on the way out; their logs go with them unless --keep-logs keeps them."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from turnstream_tools.benchmarks.children import Children


def _sleeper(children: Children, name: str) -> Path:
    log = children._log(name)
    log.write(b"worker ready\n")
    children._keep(name, subprocess.Popen(["sleep", "30"], stdout=log, stderr=subprocess.STDOUT), log)
    return Path(log.name)


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
