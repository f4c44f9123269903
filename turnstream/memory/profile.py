"""The memory profile's cheap, LLM-free paths (pure): append with a sliding window on write, cut on read.

The profile is one line per key fact. Both paths keep the END of the text: facts are appended, so
the newest (a correction included) are last; the async LLM merge later rewrites it short.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from turnstream.schemas.memory import Memory

_BOUNDARY = re.compile(r"[\s。！？；，、.!?;,]+")
"""Where a cut inside one line may start: after a space or a punctuation mark (EN and ZH)."""


def _line(text: str) -> str:
    return " ".join(text.split())


def keep_tail(text: str, max_chars: int) -> str:
    """The last `max_chars` characters of `text`, starting on a clean boundary.

    A line start is preferred when it keeps at least half the room; otherwise the cut starts
    after the first space or punctuation, so no word (or CJK clause) is kept in half.
    """
    if len(text) <= max_chars:
        return text
    cut = text[len(text) - max_chars :]
    if text[len(text) - max_chars - 1] == "\n":
        return cut
    newline = cut.find("\n")
    if newline != -1 and len(cut) - newline - 1 >= max_chars // 2:
        return cut[newline + 1 :]
    boundary = _BOUNDARY.search(cut)
    return cut[boundary.end() :] if boundary and boundary.end() < len(cut) else cut


def append_profile(profile: str, new_fact_texts: Iterable[str], window_chars: int, replaced: Iterable[str] = ()) -> str:
    """`profile` with each new fact appended as a line unless already present, lines equal to a `replaced` text
    removed (a corrected memory's old text), cut to its last `window_chars` characters."""
    gone = {_line(text) for text in replaced}
    lines = [line for line in profile.split("\n") if line.strip() and _line(line) not in gone]
    for text in map(_line, new_fact_texts):
        if text and not any(text in line for line in lines):
            lines.append(text)
    return keep_tail("\n".join(lines), window_chars)


def cut_profile(profile: str, read_chars: int) -> str:
    """What a prompt shows of the profile: its last `read_chars` characters on a clean boundary."""
    return keep_tail(profile.strip(), read_chars)


def profile_additions(memories: Iterable[Memory]) -> list[str]:
    """Texts that belong in the profile: stable facts and preferences, not events or summaries."""
    return [memory.text for memory in memories if memory.type in ("fact", "preference")]


def needs_condensing(profile: str, read_chars: int) -> bool:
    """Whether the appended profile outgrew what a prompt shows of it: the asynchronous LLM merge is worth a call."""
    return len(profile) > read_chars
