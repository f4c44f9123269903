"""What the session core needs of the settings, and nothing else: a small frozen value, no settings library."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from turnstream.settings import Settings

STALE_REQUEST_MARGIN_SECONDS = 30.0
"""Beyond the summarizer's own retries: a request unanswered that long is taken as lost and re-sent."""


@dataclass(frozen=True)
class CoreConfig:
    """The session core's configuration; each field is the TURNSTREAM_* setting of the same name (no defaults
    here: Settings holds them, `from_settings` takes them)."""

    budget_tokens: int
    budget_messages: int | None
    drop_headroom: float
    summary_max_tokens: int
    max_facts: int
    dedup_window: int
    llm_enabled: bool
    """An LLM endpoint is configured: dropped spans are sent for an asynchronous summary."""
    llm_timeout_seconds: float
    llm_max_retries: int

    @classmethod
    def from_settings(cls, settings: Settings) -> CoreConfig:
        return cls(
            budget_tokens=settings.budget_tokens,
            budget_messages=settings.budget_messages,
            drop_headroom=settings.drop_headroom,
            summary_max_tokens=settings.summary_max_tokens,
            max_facts=settings.max_facts,
            dedup_window=settings.dedup_window,
            llm_enabled=settings.llm_enabled,
            llm_timeout_seconds=settings.llm_timeout_seconds,
            llm_max_retries=settings.llm_max_retries,
        )

    @property
    def headroom_tokens(self) -> int:
        """`drop_headroom` of the budget, in tokens."""
        return int(self.budget_tokens * self.drop_headroom)

    @property
    def stale_after(self) -> float:
        """Seconds after which a summary request still unanswered is taken as lost."""
        return self.llm_timeout_seconds * (self.llm_max_retries + 1) + STALE_REQUEST_MARGIN_SECONDS
