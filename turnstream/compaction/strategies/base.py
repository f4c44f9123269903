"""The contract between the compactor and the strategies that digest what it drops."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal, Protocol

from turnstream.text.chat import Message
from turnstream.text.language import Language

FactType = Literal["fact", "preference", "event", "constraint", "failure"]


@dataclass(frozen=True, slots=True)
class Fact:
    """One piece of key information taken from dropped turns."""

    type: FactType
    """What kind of information this is."""
    text: str
    """The information itself, as a short standalone sentence."""
    key: str
    """Dedup identity: the same key means the same slot (a corrected value replaces the old one)."""
    source_seq: int = -1
    """Position in the conversation of the message it came from (-1 when unknown)."""


@dataclass(frozen=True, slots=True)
class ArchivedTurn:
    """A raw dropped message kept for later recall."""

    seq: int
    """Position of the message in the conversation."""
    message: Message
    """The message as it was."""
    keywords: tuple[str, ...]
    """Search keys for recall (lower-cased words, CJK bigrams)."""


@dataclass(frozen=True, slots=True)
class Digest:
    """What the strategies know about everything dropped so far; bounded in size."""

    summary: str = ""
    """Rolling summary of the dropped history, capped in tokens."""
    facts: tuple[Fact, ...] = ()
    """Deduplicated key facts, capped in count."""
    archived: tuple[ArchivedTurn, ...] = field(default=())
    """Turns archived by the latest application only; the owner ships them out and clears them."""
    language: Language | None = None
    """The conversation's language (as the compactor's marker speaks it) while a span is folded, for the
    strategies that write words of their own; None when the caller does not know it (they judge the span)."""
    times: tuple[float | None, ...] = ()
    """When each message of the span being folded was said (epoch seconds, None when unknown), while it is
    folded; empty when the caller knows none: the summary then leaves the span undated."""


class Strategy(Protocol):
    """Folds a newly dropped span into the digest. Must not raise on any input."""

    name: str

    def apply(self, digest: Digest, dropped: Sequence[Message], first_seq: int) -> Digest:
        """Return the new digest; `first_seq` is the conversation position of `dropped[0]`."""
        ...
