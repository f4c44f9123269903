"""The gateway SDK and the HTTP API are typed: `mypy --strict` on turnstream/client, turnstream/schemas and
turnstream/serve (pyproject's [tool.mypy])."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).parents[2]


def test_the_sdk_passes_mypy_strict() -> None:
    done = subprocess.run([sys.executable, "-m", "mypy"], cwd=ROOT, capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "no issues found" in done.stdout
