"""Composite: several strategies applied in order, each seeing the digest the previous one produced."""

from __future__ import annotations

import logging
from collections.abc import Sequence

from turnstream.compaction.strategies.base import Digest, Strategy
from turnstream.text.chat import Message

log = logging.getLogger(__name__)


class CompositeStrategy:
    """Runs its strategies in order (Solon's: archive, then extract, then summarize)."""

    def __init__(self, *strategies: Strategy) -> None:
        self.strategies: tuple[Strategy, ...] = strategies
        self.name = "+".join(s.name for s in strategies) or "none"

    def apply(self, digest: Digest, dropped: Sequence[Message], first_seq: int) -> Digest:
        for strategy in self.strategies:
            try:
                digest = strategy.apply(digest, dropped, first_seq)
            except Exception:  # a misbehaving custom strategy must not cost the others their work
                log.exception("strategy %s failed; skipped", getattr(strategy, "name", strategy))
        return digest
