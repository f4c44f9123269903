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
    compaction: faust.TopicT
    """Dropped spans for the asynchronous LLM summarizer (used only when an LLM is configured)."""
    summaries: faust.TopicT
    """The summarizer's answers, keyed by session, back to the session's single writer."""
    session_input: faust.TopicT
    """What the session agent consumes: turns, plus summaries when an LLM is configured."""


def declare_topics(app: faust.App, settings: Settings) -> Topics:
    def raw_topic(*names: str) -> faust.TopicT:
        return app.topic(
            *names,
            key_type=bytes,
            value_type=bytes,
            key_serializer="raw",
            value_serializer="raw",
            partitions=settings.turn_partitions,
        )

    session_topics = [settings.turns_topic] + ([settings.summaries_topic] if settings.llm_enabled else [])
    return Topics(
        turns=raw_topic(settings.turns_topic),
        dlq=raw_topic(settings.dlq_topic),
        compaction=raw_topic(settings.compaction_topic),
        summaries=raw_topic(settings.summaries_topic),
        session_input=raw_topic(*session_topics),
    )
