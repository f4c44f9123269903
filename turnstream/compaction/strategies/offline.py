"""The offline strategy: archive, then key-info extraction, then rolling summary (Solon's order), all without an
LLM; turnstream.llm.strategies's build_llm_strategy is the same with an LLM."""

from __future__ import annotations

from typing import TYPE_CHECKING

from turnstream.compaction.strategies.archive import Archiver
from turnstream.compaction.strategies.composite import CompositeStrategy
from turnstream.compaction.strategies.keyinfo import KeyInfoExtractor
from turnstream.compaction.strategies.summary import RollingSummarizer

if TYPE_CHECKING:
    from turnstream.settings import CompactionSettings


def build_strategy(settings: CompactionSettings, archive: bool = True) -> CompositeStrategy:
    """The offline strategy with the settings' fact and summary limits.

    `archive=False` leaves the archiver out, for owners that keep the raw turns elsewhere (the stream
    worker: the turns topic itself is the archive).
    """
    return offline_strategy(settings.max_facts, settings.summary_max_tokens, archive)


def offline_strategy(max_facts: int, summary_max_tokens: int, archive: bool = True) -> CompositeStrategy:
    """build_strategy from the two numbers it takes of the settings: for callers that hold no Settings (the session core)."""
    archiver = (Archiver(),) if archive else ()
    return CompositeStrategy(*archiver, KeyInfoExtractor(max_facts), RollingSummarizer(summary_max_tokens))
