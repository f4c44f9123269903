"""Blocks of a document generated from the code, between a begin and an end marker (docs/configuration.md's
settings table, docs/protocol.md's contract tables): read one, replace one, rewrite files in place."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path


def block_between(text: str, begin: str, end: str) -> str:
    """What stands between `begin` and `end` in `text`; ValueError when a marker is missing."""
    if begin not in text or end not in text:
        raise ValueError(f"no markers {begin!r} … {end!r}")
    return text.split(begin, 1)[1].split(end, 1)[0].strip("\n") + "\n"


def replace_between(text: str, begin: str, end: str, body: str) -> str:
    """`text` with what stands between `begin` and `end` replaced by `body` (ending in a newline)."""
    head, rest = text.split(begin, 1)
    return f"{head}{begin}\n{body}{end}{rest.split(end, 1)[1]}"


def rewrite_files(paths: Sequence[str], rewrite: Callable[[str], str]) -> int:
    """Rewrite each file in place with `rewrite`; the exit status of a `python -m` generator (0)."""
    for name in paths:
        path = Path(name)
        path.write_text(rewrite(path.read_text(encoding="utf-8")), encoding="utf-8")
    return 0
