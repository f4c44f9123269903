"""Pure rules and strategies over message lists: no Kafka, no Redis.

The face holds what is light: the message shape check (messages.py) and the markers (marker.py). The compactor
is imported from its modules, compaction.compactor (`compact`, `CompactionResult`, `KEEP_DIGEST`) and
compaction.incremental (`SessionCompactor`, `PopError`), so the prompt read, which needs of it only
compaction/fitting.py, loads neither the compactor nor the worker's strategies.
"""

from turnstream.compaction.marker import MARKERS
from turnstream.compaction.messages import MessageError, validate_messages

__all__ = ["MARKERS", "MessageError", "validate_messages"]
