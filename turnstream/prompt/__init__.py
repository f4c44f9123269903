"""The prompt read, pure: what a gateway asks for, and the prompt assembled from what one Redis round trip returns.

No I/O here (the round trip is redis/'s) and no LLM; of the compactor it uses compaction/fitting.py alone,
the rules a tail and a summary block are fitted to a budget by.
"""

from turnstream.prompt.assemble import Prompt, assemble, finish_prompt
from turnstream.prompt.query import PromptQuery, prompt_query
from turnstream.prompt.read import ArchiveQuery, Recalled, RecallResult

__all__ = [
    "ArchiveQuery",
    "Prompt",
    "PromptQuery",
    "RecallResult",
    "Recalled",
    "assemble",
    "finish_prompt",
    "prompt_query",
]
