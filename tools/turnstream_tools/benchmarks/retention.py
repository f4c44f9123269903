"""Figure 5: planted facts retained at a small budget, each offline strategy against the newest messages that fit (pure)."""

from __future__ import annotations

from turnstream.compaction.compactor import compact
from turnstream.compaction.strategies import Strategy
from turnstream.compaction.strategies.composite import CompositeStrategy
from turnstream.compaction.strategies.keyinfo import KeyInfoExtractor
from turnstream.compaction.strategies.offline import build_strategy
from turnstream.compaction.strategies.summary import RollingSummarizer
from turnstream.settings import Settings
from turnstream_tools.benchmarks.figures import Figure, Row, Target
from turnstream_tools.samples.planted import generate, message_lines, naive_tail
from turnstream_tools.samples.planted import retention as retained_share

BUDGET_TOKENS = 1500
SUMMARY_MAX_TOKENS = 300
MAX_FACTS = 20
TURNS = 400
TARGET_OURS = 0.90
TARGET_NAIVE = 0.10


def strategies(settings: Settings) -> dict[str, Strategy]:
    """The offline strategies alone and combined as the worker runs them."""
    return {
        "key-info extraction": CompositeStrategy(KeyInfoExtractor(settings.max_facts)),
        "rolling summary": CompositeStrategy(RollingSummarizer(settings.summary_max_tokens)),
        "combined (worker default)": build_strategy(settings, archive=False),
    }


def retention(conversations: int, turns: int = TURNS, budget_tokens: int = BUDGET_TOKENS) -> Figure:
    """Mean share of planted facts still in the compacted context, over EN and ZH conversations."""
    # a summary cap and fact cap that fit a 1,500-token budget: the defaults are sized for 4,000
    settings = Settings(summary_max_tokens=SUMMARY_MAX_TOKENS, max_facts=MAX_FACTS)
    planted = [generate(seed, turns=turns, lang="en" if seed % 2 == 0 else "zh") for seed in range(conversations)]
    naive = _mean([retained_share(c.facts, message_lines(naive_tail(c.messages, budget_tokens))) for c in planted])
    rows = []
    for name, strategy in strategies(settings).items():
        ours = [
            retained_share(c.facts, message_lines(compact(c.messages, budget_tokens, strategy=strategy).messages))
            for c in planted
        ]
        rows.append(Row.of(name, "% of facts", 100 * _mean(ours), 100 * naive))
    combined = rows[-1]
    target = Target(
        f"combined ≥ {TARGET_OURS:.0%} vs newest-fit < {TARGET_NAIVE:.0%}",
        combined.a >= 100 * TARGET_OURS and combined.b < 100 * TARGET_NAIVE,
    )
    return Figure(
        "retention",
        f"5 Fact retention at {budget_tokens:,} tokens",
        "strategy",
        "newest that fit",
        rows,
        target,
        {"budget_tokens": budget_tokens, "conversations": conversations, "turns": turns},
    )


def _mean(values: list[float]) -> float:
    return sum(values) / len(values)
