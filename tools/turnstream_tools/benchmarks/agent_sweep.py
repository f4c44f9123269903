"""Figure 13's measure over many seeds, per seed, budget and domain, and what a change moved against a saved sweep.

A change to the compactor's rules is kept only if it holds on every domain of traces it was not tuned on; figure 13
reads three seeds. This reads more (by default seven, four traces a domain: about two minutes) and, given the JSON of
a sweep before the change, marks each row the change moved: UP (no share fell), DOWN (no share rose) or MIXED.

    python -m turnstream_tools.benchmarks.agent_sweep --json before.json          # on the code before the change
    python -m turnstream_tools.benchmarks.agent_sweep --against before.json       # on the change: what moved

Offline: no broker, no Redis, no model.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from turnstream.compaction.strategies.offline import build_strategy
from turnstream.settings import Settings
from turnstream_tools.benchmarks.agent_values import agent_values, domain_of
from turnstream_tools.samples.agent_traces import agent_traces

SEEDS = (0, 31, 47, 59, 71, 83, 97)
"""Seeds whose traces never overlap figure 13's held-out ones (`HOLDOUT_SEEDS`, three traces a domain each from 11 and
23): a rule kept because it held on these leaves the held-out share a measure of traces no rule was judged on."""
PER_DOMAIN = 4
Counts = list[int]
"""Of one seed, budget and domain: old values kept, old values, values kept, values needed, calls clean, calls."""


def sweep(seeds: Sequence[int], per_domain: int, progress: bool = False) -> dict[str, Counts]:
    """Each seed's traces through `compact` at figure 13's budgets: counts keyed `seed@budget@domain`."""
    strategy = build_strategy(Settings())
    counts: dict[str, Counts] = {}
    started = time.monotonic()
    for seed in seeds:
        traces = agent_traces(per_domain, seed)
        measured = agent_values([(domain_of(trace), trace.messages) for trace in traces], strategy)
        for budget, by_domain in measured.items():
            for domain, measure in by_domain.items():
                ours = measure.sides["turnstream"]
                counts[f"{seed}@{budget}@{domain}"] = [
                    ours.old_kept,
                    ours.old,
                    ours.kept,
                    ours.needed,
                    measure.clean,
                    measure.points,
                ]
        if progress:
            print(f"[sweep {time.monotonic() - started:6.1f}s] seed {seed}", file=sys.stderr, flush=True)
    return counts


def movement(before: Counts, after: Counts) -> str:
    """How a row moved: "" unchanged, UP when neither share fell, DOWN when neither rose, else MIXED."""
    if before == after:
        return ""
    old, kept = after[0] - before[0], after[2] - before[2]
    if old >= 0 and kept >= 0 and after[4] >= before[4]:
        return "UP"
    if old <= 0 and kept <= 0:
        return "DOWN"
    return "MIXED"


def row(key: str, counts: Counts, before: Counts | None = None) -> str:
    """One line: the key, old and all values kept of needed, calls clean; with `before`, both sides and the mark."""
    if before is None:
        return f"{key:28} old {counts[0]}/{counts[1]}  all {counts[2]}/{counts[3]}  clean {counts[4]}/{counts[5]}"
    return (
        f"{key:28} old {before[0]}/{before[1]} -> {counts[0]}  all {before[2]}/{before[3]} -> {counts[2]}  "
        f"clean {before[4]}/{before[5]} -> {counts[4]}/{counts[5]}  {movement(before, counts)}".rstrip()
    )


def report(counts: Mapping[str, Counts], before: Mapping[str, Counts] | None, domains: bool) -> list[str]:
    """The lines to print: every seed and budget over all domains, and with `domains` each domain; against
    `before`, only the rows it has, each marked."""
    lines = []
    for key, now in counts.items():
        if not domains and not key.endswith("@all"):
            continue
        if before is None:
            lines.append(row(key, now))
        elif key in before:
            lines.append(row(key, now, before[key]))
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m turnstream_tools.benchmarks.agent_sweep",
        description="Figure 13's agent values over many seeds, per seed, budget and domain; against a saved sweep, "
        "what a change moved.",
    )
    parser.add_argument("--seeds", type=int, nargs="+", default=list(SEEDS), help="trace seeds (default: %(default)s)")
    parser.add_argument("--per-domain", type=int, default=PER_DOMAIN, help="traces a domain (default: %(default)s)")
    parser.add_argument("--json", type=Path, metavar="FILE", help="also write the counts to FILE")
    parser.add_argument("--against", type=Path, metavar="FILE", help="a sweep's JSON to compare with")
    parser.add_argument("--domains", action="store_true", help="a row per domain too, not only all domains")
    args = parser.parse_args(argv)
    if args.per_domain < 1:
        parser.error("--per-domain must be at least 1")
    before = None
    if args.against is not None:
        try:
            before = json.loads(args.against.read_text())
        except (OSError, ValueError) as error:
            parser.error(f"--against {args.against}: {error}")
    counts = sweep(args.seeds, args.per_domain, progress=True)
    if args.json is not None:
        args.json.write_text(json.dumps(counts) + "\n")
    print("\n".join(report(counts, before, args.domains)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
