"""Pure rules and strategies over message lists: no Kafka, no Redis."""

from turnstream.compaction.compactor import KEEP_DIGEST, CompactionResult, TokenCounts, compact
from turnstream.compaction.marker import MARKERS
from turnstream.compaction.messages import MessageError, validate_messages
from turnstream.compaction.incremental import PopError, SessionCompactor
from turnstream.text.language import detect_language

__all__ = [
    "KEEP_DIGEST",
    "MARKERS",
    "CompactionResult",
    "MessageError",
    "PopError",
    "SessionCompactor",
    "TokenCounts",
    "compact",
    "detect_language",
    "validate_messages",
]
