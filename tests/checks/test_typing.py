"""The whole package and its tools are typed: `mypy --strict` over every module of turnstream/ and
tools/turnstream_tools/ (pyproject's [tool.mypy]), with no error and no ignore that does not name its error code."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).parents[2]


def test_the_mypy_configuration_covers_the_whole_package_strictly() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["mypy"]
    assert config["files"] == ["turnstream", "tools/turnstream_tools"]
    assert config["strict"] is True
    assert "ignore-without-code" in config["enable_error_code"]


def test_the_package_passes_mypy_strict() -> None:
    done = subprocess.run([sys.executable, "-m", "mypy"], cwd=ROOT, capture_output=True, text=True, timeout=400)
    assert done.returncode == 0, done.stdout + done.stderr
    modules = sum(1 for root in ("turnstream", "tools/turnstream_tools") for _ in (ROOT / root).rglob("*.py"))
    assert f"Success: no issues found in {modules} source files" in done.stdout, done.stdout
