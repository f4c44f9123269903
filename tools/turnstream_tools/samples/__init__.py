"""Synthetic conversations for tests, benchmarks and the demo."""

from turnstream_tools.samples.planted import (
    PlantedConversation,
    PlantedFact,
    generate,
    is_retained,
    message_lines,
    retention,
)

__all__ = ["PlantedConversation", "PlantedFact", "generate", "is_retained", "message_lines", "retention"]
