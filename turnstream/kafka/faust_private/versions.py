"""The faust-streaming and aiokafka releases the private surface in this package was tested with, and the check.

The modules beside this one rely on internals that a minor release may rename or remove without notice,
which would fail far from the cause (a worker that stops fetching, a commit that passes a turn). The worker
command therefore refuses, at start-up and in one line, a release outside these ranges. The worker extra's
pins in pyproject.toml state the same ranges (tests/unit/kafka/faust_private/test_versions.py keeps them equal).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from importlib import metadata

TESTED: dict[str, tuple[str, str]] = {
    "faust-streaming": ("0.15.3", "0.16"),
    "aiokafka": ("0.12", "0.15"),
}
"""Distribution -> (lowest release tested, first release not tested)."""

_RELEASE = re.compile(r"\d+(?:\.\d+)*")


def release(version: str) -> tuple[int, ...]:
    """The numeric release of a version string (`0.15.3rc1` -> (0, 15, 3)); () when it starts with no number,
    which sorts below every range."""
    match = _RELEASE.match(version.strip().lstrip("vV"))
    return tuple(int(part) for part in match.group(0).split(".")) if match else ()


def untested(name: str, version: str) -> str | None:
    """Why `version` of distribution `name` is refused (one line), or None when it is in the tested range."""
    low, high = TESTED[name]
    if release(low) <= release(version) < release(high):
        return None
    return (
        f"{name} {version} is outside the releases turnstream's worker was tested with (>={low},<{high}): "
        f"it relies on their internals (turnstream/faust_private); install {name}>={low},<{high}"
    )


def installed() -> dict[str, str]:
    """The installed version of every distribution in TESTED (a missing one is left out: require_extra reports it)."""
    found = {}
    for name in TESTED:
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return found


def refusal(versions: Mapping[str, str]) -> str | None:
    """The first of `versions` outside its tested range, as one line; None when every one is in range."""
    return next((reason for name, version in versions.items() if (reason := untested(name, version))), None)
