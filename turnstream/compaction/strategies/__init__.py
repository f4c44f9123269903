"""Strategies that digest the span the compactor drops: offline, pure. The LLM strategies are turnstream/llm's
(they send the prompts of strategies/prompts.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from turnstream.compaction.strategies.archive import Archiver
from turnstream.compaction.strategies.base import ArchivedTurn, Digest, Fact, FactType, Message, Strategy
from turnstream.compaction.strategies.composite import CompositeStrategy
from turnstream.compaction.strategies.keyinfo import KeyInfoExtractor, merge_facts
from turnstream.compaction.strategies.summary import RollingSummarizer

if TYPE_CHECKING:
    from turnstream.settings import Settings

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
    "offline_strategy",
    "merge_facts",
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
    archiver = (Archiver(),) if archive else ()
    return CompositeStrategy(*archiver, KeyInfoExtractor(max_facts), RollingSummarizer(summary_max_tokens))
