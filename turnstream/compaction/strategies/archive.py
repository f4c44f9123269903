"""Archive: the raw dropped turns, with recall keywords, for the owner to ship to long-term storage."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from turnstream.compaction.strategies.base import ArchivedTurn, Digest
from turnstream.text.chat import Message, message_text
from turnstream.text.prose import keywords

MAX_KEYWORDS = 32


class Archiver:
    """Puts this application's dropped turns in `Digest.archived`, replacing the previous batch (already shipped)."""

    name = "archive"

    def __init__(self, max_keywords: int = MAX_KEYWORDS) -> None:
        self.max_keywords = max_keywords

    def apply(self, digest: Digest, dropped: Sequence[Message], first_seq: int) -> Digest:
        archived = tuple(
            ArchivedTurn(
                seq=first_seq + offset, message=message, keywords=keywords(message_text(message), self.max_keywords)
            )
            for offset, message in enumerate(dropped)
        )
        return replace(digest, archived=archived)
