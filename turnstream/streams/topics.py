"""The topics a worker reads and writes, named under the configured prefix."""

from __future__ import annotations

from dataclasses import dataclass

import faust

from turnstream.settings import Settings


@dataclass(frozen=True)
class Topics:
    turns: faust.TopicT
    """Input, keyed by session: one session's turns are ordered in one partition."""
    dlq: faust.TopicT
    """Turns that could not be applied, with the original bytes and the reason in headers."""


def declare_topics(app: faust.App, settings: Settings) -> Topics:
    def raw_topic(name: str) -> faust.TopicT:
        return app.topic(
            name, key_type=bytes, value_type=bytes, key_serializer="raw", value_serializer="raw",
            partitions=settings.turn_partitions,
        )

    return Topics(turns=raw_topic(settings.turns_topic), dlq=raw_topic(settings.dlq_topic))
