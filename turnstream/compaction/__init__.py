"""Pure rules and strategies over message lists: no Kafka, no Redis.

Names are loaded when first asked for: the prompt read imports compaction.fitting (and what it needs) without
loading the compactor's strategies (key-info extraction, summaries), which only the worker runs.
"""

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from turnstream.compaction.compactor import KEEP_DIGEST, CompactionResult, compact
    from turnstream.compaction.incremental import PopError, SessionCompactor
    from turnstream.compaction.marker import MARKERS
    from turnstream.compaction.messages import MessageError, validate_messages
    from turnstream.text.language import detect_language

_WHERE = {
    "KEEP_DIGEST": "turnstream.compaction.compactor",
    "CompactionResult": "turnstream.compaction.compactor",
    "compact": "turnstream.compaction.compactor",
    "PopError": "turnstream.compaction.incremental",
    "SessionCompactor": "turnstream.compaction.incremental",
    "MARKERS": "turnstream.compaction.marker",
    "MessageError": "turnstream.compaction.messages",
    "validate_messages": "turnstream.compaction.messages",
    "detect_language": "turnstream.text.language",
}


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(_WHERE[name]), name)


__all__ = [
    "CompactionResult",
    "KEEP_DIGEST",
    "MARKERS",
    "MessageError",
    "PopError",
    "SessionCompactor",
    "compact",
    "detect_language",
    "validate_messages",
]
