"""The code passes ruff's lint rules (pyproject's [tool.ruff.lint]) and is as ruff's formatter writes it, over the
package, its tests and the bench scripts. Line length (E501) is left to the formatter, which wraps code; what it
cannot wrap (long strings, comments, docstrings) may run over."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).parents[2]
CHECKED = ["turnstream", "tools", "tests"]


def _ruff(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ruff", *args, "--no-cache", *CHECKED],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_the_package_and_the_tests_pass_ruff() -> None:
    done = _ruff("check", "--ignore", "E501")
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_code_is_formatted() -> None:
    done = _ruff("format", "--check")
    assert done.returncode == 0, "run `ruff format turnstream tools tests`:\n" + done.stdout + done.stderr
