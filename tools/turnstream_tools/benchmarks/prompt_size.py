"""Figure 4: prompt tokens after N turns, the compacted context against the naive full history (pure)."""

from __future__ import annotations

import orjson

from turnstream.compaction.incremental import SessionCompactor
from turnstream.compaction.strategies.offline import build_strategy
from turnstream.settings import Settings
from turnstream.text.tokens import REPLY_PRIMING_TOKENS, count_message
from turnstream_tools.benchmarks.figures import Figure, Row, Target
from turnstream_tools.samples.conversations import generate_conversations

CHECKPOINTS = (50, 200, 1000, 5000)
SERIES_STEP = 50
FLAT_GROWTH = 1.05
"""Flat: the compacted prompt at 5,000 turns is at most this many times the one at 1,000."""


def prompt_size(settings: Settings, checkpoints: tuple[int, ...] = CHECKPOINTS, seed: int = 0) -> Figure:
    """Feed one long conversation a turn at a time, as the worker does; compare token counts on the way."""
    turns = max(checkpoints)
    [conversation] = generate_conversations(1, turns, seed)
    session = SessionCompactor(
        settings.budget_tokens,
        budget_messages=settings.budget_messages,
        strategy=build_strategy(settings, archive=False),
    )
    naive = REPLY_PRIMING_TOKENS
    naive_bytes = 2  # the JSON array's brackets
    series: dict[str, list[int]] = {"turns": [], "compacted": [], "naive": []}
    sizes: dict[int, tuple[int, int]] = {}
    for index, message in enumerate(conversation.messages, 1):
        session.append(message)
        # the naive prompt is the whole history: count_messages() of it, kept as a running sum
        naive += count_message(message)
        naive_bytes += len(orjson.dumps(message)) + (index > 1)  # a comma between messages
        if index % SERIES_STEP == 0 or index in checkpoints:
            result = session.result()
            series["turns"].append(index)
            series["compacted"].append(result.tokens.after)
            series["naive"].append(naive)
            sizes[index] = (len(orjson.dumps(list(result.messages))), naive_bytes)
    at = {n: (series["compacted"][i], series["naive"][i]) for i, n in enumerate(series["turns"])}
    rows = [Row.of(f"after {n:,} turns", "tokens", *at[n]) for n in checkpoints]
    rows += [Row.of(f"after {n:,} turns", "bytes (JSON)", *sizes[n]) for n in checkpoints]
    target = _flat_target(at, checkpoints)
    return Figure(
        "prompt_size",
        "4 Prompt size",
        "compacted",
        "naive history",
        rows,
        target,
        {"budget_tokens": settings.budget_tokens, "series": series},
    )


def _flat_target(at: dict[int, tuple[int, int]], checkpoints: tuple[int, ...]) -> Target:
    if 1000 not in checkpoints or 5000 not in checkpoints:
        return Target("flat from 1,000 to 5,000 turns (not measured)", False)
    growth = at[5000][0] / at[1000][0]
    return Target(f"flat 1k→5k turns: ×{growth:.2f} ≤ ×{FLAT_GROWTH}", growth <= FLAT_GROWTH)
