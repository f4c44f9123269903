"""Long-term memory: typed memories and a short profile per user, recalled into prompts without an LLM."""

from turnstream.memory.extract import changed_facts, memories_from_facts, summary_memory
from turnstream.memory.model import Memory, MemoryType, memory_id, owner_key
from turnstream.memory.profile import append_profile, cut_profile, profile_additions
from turnstream.memory.prompt import Prompt, build_prompt
from turnstream.memory.store import MemoryStore

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
