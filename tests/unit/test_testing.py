"""turnstream.testing is shipped for users' tests: it imports no test framework, and the example of
docs/testing.md runs as written."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit

DOC = Path(__file__).parents[2] / "docs" / "testing.md"


def test_importing_the_testing_module_loads_no_test_framework() -> None:
    check = (
        "import sys, turnstream.testing\n"
        "loaded = [m for m in sys.modules if m.split('.')[0] in ('pytest', '_pytest', 'hypothesis')]\n"
        "assert not loaded, loaded"
    )
    subprocess.run([sys.executable, "-c", check], check=True, timeout=60)


def test_the_documented_example_runs_as_written() -> None:
    (example,) = re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)
    done = subprocess.run([sys.executable, "-c", example], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
