"""Retention of planted facts at a small budget: offline strategies vs keeping the newest messages that fit.

    .venv/bin/python bench/bench_retention.py [--budget 1500] [--conversations 10] [--turns 400]
"""

from __future__ import annotations

import argparse
import time

from turnstream.compaction import compact
from turnstream.compaction.strategies import build_strategy
from turnstream.samples import generate, message_lines, retention
from turnstream.samples.planted import naive_tail
from turnstream.settings import Settings


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budget", type=int, default=1500)
    parser.add_argument("--conversations", type=int, default=10)
    parser.add_argument("--turns", type=int, default=400)
    parser.add_argument("--summary-max-tokens", type=int, default=300)
    parser.add_argument("--max-facts", type=int, default=20)
    args = parser.parse_args()
    settings = Settings(summary_max_tokens=args.summary_max_tokens, max_facts=args.max_facts)

    print(f"budget {args.budget} tokens, summary cap {settings.summary_max_tokens}, max facts {settings.max_facts}")
    print(f"{'conversation':<14}{'messages':>9}{'tokens':>8}{'facts':>6}{'strategies':>12}{'newest-fit':>12}{'ms':>8}")
    ours, naive = [], []
    for seed in range(args.conversations):
        lang = "en" if seed % 2 == 0 else "zh"
        conversation = generate(seed, turns=args.turns, lang=lang)
        started = time.perf_counter()
        result = compact(conversation.messages, args.budget, strategy=build_strategy(settings))
        elapsed = (time.perf_counter() - started) * 1000
        ours.append(retention(conversation.facts, message_lines(result.messages)))
        naive.append(retention(conversation.facts, message_lines(naive_tail(conversation.messages, args.budget))))
        print(f"{lang}-{seed:<11}{len(conversation.messages):>9}{result.tokens.before:>8}{len(conversation.facts):>6}{ours[-1]:>12.0%}{naive[-1]:>12.0%}{elapsed:>8.0f}")
    print(f"{'mean':<43}{sum(ours) / len(ours):>12.0%}{sum(naive) / len(naive):>12.0%}")


if __name__ == "__main__":
    main()
