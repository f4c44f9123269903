"""Long-term memory: typed memories and a short profile per user, recalled into prompts without an LLM."""

import importlib
from typing import TYPE_CHECKING, Any

from turnstream.memory.extract import changed_facts, memories_from_facts, summary_memory
from turnstream.memory.model import Memory, MemoryType, memory_id, owner_key
from turnstream.memory.profile import append_profile, cut_profile, profile_additions

if TYPE_CHECKING:
    from turnstream.memory.prompt import Prompt, build_prompt
    from turnstream.memory.store import MemoryStore

_LAZY = {"Prompt": "turnstream.memory.prompt", "build_prompt": "turnstream.memory.prompt", "MemoryStore": "turnstream.memory.store"}
"""Loaded when first asked for: the pure parts (the session core's) need neither Redis nor the settings."""


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(_LAZY[name]), name)


__all__ = [
    "Memory",
    "MemoryStore",
    "MemoryType",
    "Prompt",
    "append_profile",
    "build_prompt",
    "changed_facts",
    "cut_profile",
    "memories_from_facts",
    "memory_id",
    "owner_key",
    "profile_additions",
    "summary_memory",
]
