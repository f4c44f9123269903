"""Which conversations the demo replays: the shipped samples first, then generated variations."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from turnstream_tools.samples.conversations import Sample, generate_conversations, load_samples, turns_of


@dataclass(frozen=True)
class DemoSession:
    session_id: str
    sample: Sample

    @property
    def turns(self) -> list[dict[str, Any]]:
        return turns_of(self.sample, self.session_id)


def plan_sessions(sessions: int, turns: int | None, seed: int = 0) -> list[DemoSession]:
    """`sessions` conversations: the samples (cut to `turns` messages if given), then generated ones."""
    samples = load_samples()[:sessions]
    if turns is not None:
        samples = [replace(s, messages=s.messages[:turns]) for s in samples]
    planned = [DemoSession(f"demo-{s.id}", s) for s in samples]
    extra = sessions - len(planned)
    if extra > 0:
        generated = generate_conversations(extra, turns or 150, seed)
        planned += [DemoSession(f"demo-gen-{i:03d}", s) for i, s in enumerate(generated)]
    return planned
