"""Strategies that digest the span the compactor drops.

The LLM strategies (strategies/llm.py) load on first use, so importing the offline ones never loads
the openai client: `build_strategy(settings, llm=True)` or any of their names below imports them.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from turnstream.compaction.strategies.archive import Archiver
from turnstream.compaction.strategies.base import ArchivedTurn, Digest, Fact, FactType, Message, Strategy
from turnstream.compaction.strategies.composite import CompositeStrategy
from turnstream.compaction.strategies.keyinfo import KeyInfoExtractor, merge_facts
from turnstream.compaction.strategies.summary import RollingSummarizer

if TYPE_CHECKING:
    from turnstream.compaction.strategies.llm import (
        LLMKeyInfoExtractor,
        LLMSummarizer,
        client_options,
        extract_facts,
        merge_profile,
        merge_summary,
    )
    from turnstream.settings import Settings

_LLM_NAMES = frozenset({"LLMKeyInfoExtractor", "LLMSummarizer", "client_options", "extract_facts", "merge_profile", "merge_summary"})


def __getattr__(name: str) -> Any:
    """The LLM strategies' names, imported on first use."""
    if name in _LLM_NAMES:
        return getattr(importlib.import_module("turnstream.compaction.strategies.llm"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

__all__ = [
    "ArchivedTurn",
    "Archiver",
    "CompositeStrategy",
    "Digest",
    "Fact",
    "FactType",
    "KeyInfoExtractor",
    "LLMKeyInfoExtractor",
    "LLMSummarizer",
    "Message",
    "RollingSummarizer",
    "Strategy",
    "build_strategy",
    "client_options",
    "extract_facts",
    "merge_facts",
    "merge_profile",
    "merge_summary",
]


def build_strategy(settings: Settings, llm: bool = False, archive: bool = True) -> CompositeStrategy:
    """Archive, then key-info extraction, then rolling summary (Solon's order); LLM-backed when `llm`.

    `archive=False` leaves the archiver out, for owners that keep the raw turns elsewhere (the stream
    worker: the turns topic itself is the archive).
    """
    archiver = (Archiver(),) if archive else ()
    if not llm:
        return CompositeStrategy(*archiver, KeyInfoExtractor(settings.max_facts), RollingSummarizer(settings.summary_max_tokens))
    if not settings.openai_base_url:
        raise ValueError("LLM strategies need an OpenAI-compatible endpoint: set OPENAI_BASE_URL (or TURNSTREAM_OPENAI_BASE_URL)")
    import openai  # only the LLM path pays for the client

    from turnstream.compaction.strategies.llm import LLMKeyInfoExtractor, LLMSummarizer, client_options

    client = openai.OpenAI(**client_options(settings.openai_base_url, settings.openai_api_key.get_secret_value(), settings.llm_timeout_seconds))
    common = {"timeout": settings.llm_timeout_seconds, "max_retries": settings.llm_max_retries}
    return CompositeStrategy(
        *archiver,
        LLMKeyInfoExtractor(client, settings.llm_model, max_facts=settings.max_facts, **common),
        LLMSummarizer(client, settings.llm_model, max_tokens=settings.summary_max_tokens, **common),
    )
