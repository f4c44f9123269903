"""Long-term memory: typed memories and a short profile per user, recalled into prompts without an LLM.

The rules only (what a turn's facts become, the profile's windows, an archive entry, the journal's replay); the
records are schemas' (schemas/memory.py, schemas/archive.py, schemas/journal.py), the Redis side is redis/'s.
"""

from turnstream.memory.extract import changed_facts, memories_from_facts, summary_memory
from turnstream.memory.profile import append_profile, cut_profile, profile_additions

__all__ = [
    "append_profile",
    "changed_facts",
    "cut_profile",
    "memories_from_facts",
    "profile_additions",
    "summary_memory",
]
