"""The TypeScript client package (clients/typescript): installed and compiled for the tests that run it."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.support.programs import tool

PACKAGE = Path(__file__).parents[2] / "clients" / "typescript"


def built_client() -> None:
    """`npm ci` when node_modules does not hold the locked TypeScript, then `npm run build` (tsc), failing the
    test with npm's own words when either fails."""
    locked = json.loads((PACKAGE / "package-lock.json").read_text())["packages"]["node_modules/typescript"]["version"]
    installed = PACKAGE / "node_modules" / "typescript" / "package.json"
    npm = tool("npm", "the TypeScript client is built with npm")
    if not installed.exists() or json.loads(installed.read_text())["version"] != locked:
        _run([npm, "ci", "--no-audit", "--no-fund"], 300)
    _run([npm, "run", "--silent", "build"], 180)


def _run(command: list[str], timeout: int) -> None:
    done = subprocess.run(command, cwd=PACKAGE, capture_output=True, text=True, timeout=timeout)
    if done.returncode != 0:
        pytest.fail(
            f"{' '.join(command[1:])} in {PACKAGE} failed ({done.returncode}):\n{done.stdout[-2000:]}\n"
            f"{done.stderr[-3000:]}",
            pytrace=False,
        )
