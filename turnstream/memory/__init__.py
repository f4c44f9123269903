"""Long-term memory: typed memories and a short profile per user, recalled into prompts without an LLM."""

from turnstream.memory.extract import changed_facts, memories_from_facts, summary_memory
from turnstream.memory.model import Memory, MemoryType, memory_id, owner_key
from turnstream.memory.profile import append_profile, cut_profile, profile_additions

__all__ = [
    "Memory",
    "MemoryType",
    "append_profile",
    "changed_facts",
    "cut_profile",
    "memories_from_facts",
    "memory_id",
    "owner_key",
    "profile_additions",
    "summary_memory",
]
