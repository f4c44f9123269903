"""Strategies that digest the span the compactor drops: offline, pure. The LLM strategies are turnstream/llm's
(they send the prompts of strategies/prompts.py).

The face holds the data types the strategies share (base.py), which the prompt read loads too; the strategies
are imported from their modules, so importing a type loads none of their rules: archive.Archiver,
composite.CompositeStrategy, keyinfo.KeyInfoExtractor and merge_facts, summary.RollingSummarizer, and
offline.build_strategy and offline_strategy (the three in Solon's order).
"""

from turnstream.compaction.strategies.base import ArchivedTurn, Digest, Fact, FactType, Strategy

__all__ = ["ArchivedTurn", "Digest", "Fact", "FactType", "Strategy"]
