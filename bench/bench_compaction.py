"""Compaction cost: batch time on a 2,000-turn conversation, and incremental append cost at turn ~2,000 vs ~100.

Run: .venv/bin/python bench/bench_compaction.py. The two incremental positions are measured side by side,
interleaved, on the same new turns, so machine noise hits both alike; medians are reported.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from typing import Any

from turnstream.compaction import SessionCompactor, compact
from turnstream.compaction.strategies import build_strategy
from turnstream.settings import Settings

CITIES = ["Lisbon", "Tokyo", "Oslo", "Lima", "Cairo", "Seoul", "Quito", "Perth"]


def conversation(turns: int, seed: int = 7) -> list[dict[str, Any]]:
    """A ReAct trace of `turns` messages: thoughts, single and parallel calls, results, user interjections."""
    rng = random.Random(seed)
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "You are a travel planning agent."},
        {"role": "user", "content": "Plan ten days in Japan under 3000 EUR."},
    ]
    step = 0
    while len(messages) < turns:
        if rng.random() < 0.15:
            messages.append({"role": "user", "content": f"Also keep hotels under {rng.randint(60, 200)} EUR a night."})
        messages.append({"role": "assistant", "content": f"Thought {step}: I should compare more options."})
        ids = [f"call_{step}_{n}" for n in range(rng.choice([1, 1, 2, 3]))]
        calls = [{"id": i, "type": "function", "function": {"name": "search", "arguments": f'{{"q": "{rng.choice(CITIES)}"}}'}} for i in ids]
        messages.append({"role": "assistant", "content": None, "tool_calls": calls})
        for i in ids:
            messages.append({"role": "tool", "tool_call_id": i, "content": " ".join(rng.choice(CITIES) for _ in range(rng.randint(5, 60)))})
        messages.append({"role": "assistant", "content": f"Step {step} done: {rng.randint(1, 9)} options."})
        step += 1
    # Finish on a whole step so that what follows (the measured appends) starts a new one.
    while messages[-1]["role"] == "tool" or messages[-1].get("tool_calls"):
        messages.pop()
    return messages


def batch_seconds(messages: list[dict[str, Any]], budget: int, strategy: Any, rounds: int) -> float:
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        compact(messages, budget, strategy=strategy)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def append_costs(at: list[int], budget: int, strategy: Any, rounds: int) -> list[tuple[float, float]]:
    """(median, mean) seconds of one append() + result() for sessions that had seen `at` turns when timing began.

    The mean shows the strategy folds, which only some appends trigger; the median hides them.
    """
    sessions = []
    for position in at:
        session = SessionCompactor(budget, strategy=strategy)
        for message in conversation(position):
            session.append(message)
            session.take_archived()  # the owner ships archived turns out after every append
        sessions.append(session)
    # Every session gets the same new turns, so the positions differ only in what they have seen.
    new_turns = conversation(rounds + 50, seed=11)[2:]
    samples: list[list[float]] = [[] for _ in at]
    for turn in new_turns[:rounds]:
        for session, times in zip(sessions, samples):  # interleaved: all positions see the same noise
            start = time.perf_counter()
            session.append(turn)
            session.result()
            session.take_archived()
            times.append(time.perf_counter() - start)
    return [(statistics.median(times), statistics.fmean(times)) for times in samples]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=2000)
    # Small enough that a session is already compacting at turn 100, so both positions do the same work.
    parser.add_argument("--budget-tokens", type=int, default=1500)
    parser.add_argument("--rounds", type=int, default=300)
    args = parser.parse_args()
    messages = conversation(args.turns)
    compact(messages[:50], args.budget_tokens)  # load the encoder outside the timings
    print(f"conversation: {len(messages)} messages, budget {args.budget_tokens} tokens")
    for label, strategy in (("no strategy", None), ("default offline strategies", build_strategy(Settings()))):
        batch = batch_seconds(messages, args.budget_tokens, strategy, rounds=5)
        early, late = append_costs([100, args.turns], args.budget_tokens, strategy, args.rounds)
        print(f"[{label}]")
        print(f"  batch compact(), {len(messages)} messages: {batch * 1000:.1f} ms (median of 5)")
        for name, (median, mean) in (("~100", early), (f"~{args.turns}", late)):
            print(f"  append+result at turn {name}: median {median * 1e6:.0f} µs, mean {mean * 1e6:.0f} µs ({args.rounds} appends)")
        print(f"  ratio turn {args.turns} / turn 100: median {late[0] / early[0]:.2f}, mean {late[1] / early[1]:.2f}")

if __name__ == "__main__":
    main()
