"""The token counts of one compaction: part of every compaction result and every context document.

A plain dataclass, so the rules that fill it (compaction/) load no pydantic; the context document's schema
checks and publishes it as it does a model (docs/decisions/0014-token-counts-dataclass.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from annotated_types import Ge


@dataclass(frozen=True, slots=True)
class TokenCounts:
    """Token counts of one compaction."""

    # `Ge` is plain metadata here; the context document's schema (schemas/context.py) checks and publishes it.
    before: Annotated[int, Ge(0)]
    """Tokens of the whole conversation as given (reply priming included, as everywhere here)."""
    after: Annotated[int, Ge(0)]
    """Tokens of `messages`: at most `budget` unless the anchors and the newest step alone exceed it."""
    budget: Annotated[int, Ge(0)]
    """The budget the compaction aimed at."""
