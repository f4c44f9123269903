"""The code passes ruff's lint rules (pyproject's [tool.ruff.lint]) over the package and its tests. Line length
(E501) is left to the formatter, which wraps most long lines; the rest of pycodestyle still applies."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).parents[2]


def test_the_package_and_the_tests_pass_ruff() -> None:
    done = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", "--ignore", "E501", "turnstream", "tests"],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
