"""Strategies that digest the span the compactor drops: offline, pure. The LLM strategies are turnstream/llm's
(they send the prompts of strategies/prompts.py)."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from turnstream.compaction.strategies.archive import Archiver
    from turnstream.compaction.strategies.base import ArchivedTurn, Digest, Fact, FactType, Strategy
    from turnstream.compaction.strategies.composite import CompositeStrategy
    from turnstream.compaction.strategies.keyinfo import KeyInfoExtractor, merge_facts
    from turnstream.compaction.strategies.summary import RollingSummarizer
    from turnstream.settings import Settings
    from turnstream.text.chat import Message

_WHERE = {
    "Archiver": "archive",
    "ArchivedTurn": "base",
    "Digest": "base",
    "Fact": "base",
    "FactType": "base",
    "Message": "base",
    "Strategy": "base",
    "CompositeStrategy": "composite",
    "KeyInfoExtractor": "keyinfo",
    "merge_facts": "keyinfo",
    "RollingSummarizer": "summary",
}
"""Where each name lives, loaded when first asked for: the data types (base) without the strategies' rules."""


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{_WHERE[name]}"), name)


__all__ = [
    "ArchivedTurn",
    "Archiver",
    "CompositeStrategy",
    "Digest",
    "Fact",
    "FactType",
    "KeyInfoExtractor",
    "Message",
    "RollingSummarizer",
    "Strategy",
    "build_strategy",
    "merge_facts",
    "offline_strategy",
]


def build_strategy(settings: Settings, archive: bool = True) -> CompositeStrategy:
    """Archive, then key-info extraction, then rolling summary (Solon's order); turnstream.llm.strategies's
    build_llm_strategy is the same with an LLM.

    `archive=False` leaves the archiver out, for owners that keep the raw turns elsewhere (the stream
    worker: the turns topic itself is the archive).
    """
    return offline_strategy(settings.max_facts, settings.summary_max_tokens, archive)


def offline_strategy(max_facts: int, summary_max_tokens: int, archive: bool = True) -> CompositeStrategy:
    """build_strategy from the two numbers it takes of the settings: for callers that hold no Settings (the session core)."""
    from turnstream.compaction.strategies.archive import Archiver
    from turnstream.compaction.strategies.composite import CompositeStrategy
    from turnstream.compaction.strategies.keyinfo import KeyInfoExtractor
    from turnstream.compaction.strategies.summary import RollingSummarizer

    archiver = (Archiver(),) if archive else ()
    return CompositeStrategy(*archiver, KeyInfoExtractor(max_facts), RollingSummarizer(summary_max_tokens))
