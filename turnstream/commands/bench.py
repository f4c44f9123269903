"""`turnstream bench`: the benchmark suite on the embedded stack (or the configured URLs), as ratios to yardsticks;
the broker-bound figures on Tansu, Apache Kafka or both. The arguments are here; the run is turnstream-tools'
(`turnstream_tools.benchmarks.command`)."""

from __future__ import annotations

import argparse
from pathlib import Path

from turnstream.cli import require_extra
from turnstream.commands._args import positive_float, positive_int

BROKERS = ("tansu", "kafka", "both")


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "bench",
        help="run the benchmark suite and print its figures as ratios to side-by-side yardsticks",
        description=(
            "Measure drain rate, freshness and read latency against pass-through agents on the same broker and "
            "Redis, and prompt size, fact retention and per-turn compaction cost offline. Speed figures are ratios "
            "measured side by side in one run. With TURNSTREAM_KAFKA_URL / TURNSTREAM_REDIS_URL unset, embedded "
            "services are started. Progress goes to stderr, the table to stdout."
        ),
    )
    parser.add_argument(
        "--broker",
        choices=BROKERS,
        help="the embedded broker to start: tansu (default, pip only), kafka (Apache Kafka from `make kafka`'s jars, "
        "needs Java 17+), or both: drain and freshness, with their yardsticks, on each, one stack after the "
        "other; the other figures once, on Tansu. Not with TURNSTREAM_KAFKA_URL set: that broker is measured",
    )
    parser.add_argument("--quick", action="store_true", help="a short run (about a minute): fewer rounds and samples")
    parser.add_argument("--json", type=Path, metavar="FILE", help="also write every figure to FILE as JSON")
    parser.add_argument(
        "--plot", type=Path, metavar="FILE.png", help="also draw prompt size and read latency (needs matplotlib)"
    )
    parser.add_argument(
        "--locomo",
        type=Path,
        metavar="DIR",
        help="a folder with LoCoMo's development conversations 26.json, 30.json and 41.json (from data/locomo10.zip of "
        "snap-research/locomo): adds them to the recall and story figures; without it they use the generated chats only",
    )
    parser.add_argument(
        "--sessions",
        type=positive_int,
        metavar="N",
        help="sessions the churn figure (worker memory with and without session expiry) feeds each worker; RSS is read "
        "after a tenth and after all (default 10,000; 2,000 with --quick; 100,000 takes about 10 minutes)",
    )
    parser.add_argument(
        "--no-pin",
        dest="pin",
        action="store_false",
        help="measure drain and freshness unpinned only; by default each is also measured pinned, side by side: the "
        "measured agent (worker or yardstick) on one core, the broker, Redis, the bench's producers and the idle "
        "consumers on the others (with one CPU, unpinned only)",
    )
    parser.add_argument(
        "--recall-only",
        action="store_true",
        help="measure the recall figures alone: coverage, the archive's read cost and memory, and reads on long messages (a worker, no yardstick agents)",
    )
    parser.add_argument(
        "--agents-only",
        action="store_true",
        help="measure the agent-values figure alone: generated agent traces (six domains, English and Chinese) "
        "through compact at 2,500 and 4,000 tokens, beside anchors+tail and LangChain's trim_messages, and a "
        "tool-heavy turn's cost; offline, no broker or Redis (needs the langchain extra)",
    )
    parser.add_argument(
        "--agents-stream",
        action="store_true",
        help="measure the agent values through the stream alone: the agent traces (the development seed's, and "
        "the held-out seeds' unless --quick) produced through Kafka and a worker, build_prompt at each tool call, "
        "at a 4,000-token prompt and at the defaults (a worker for each)",
    )
    parser.add_argument(
        "--llm-stand-in",
        action="store_true",
        help="with --agents-stream or --agents-only: also run the agent traces through the LLM path (workers, or "
        "compact --llm's strategies) asking a local stand-in model (copies sentences verbatim and invents one "
        "booking reference an extraction), beside the offline figures: whether the LLM path holds them and keeps "
        "every invented reference out of the prompts",
    )
    parser.add_argument(
        "--soak",
        action="store_true",
        help="the soak alone: mixed chat and agent traffic at --soak-rate through one worker with embeddings on (the "
        "local models when `make models` fetched them) for --soak-minutes, sampled every --soak-sample-seconds: "
        "worker RSS, consumer lag, freshness p99, Redis memory per owner and the embedder's lag, each series' slope "
        "per hour and whether it is flat, with a live display",
    )
    parser.add_argument(
        "--soak-rate",
        type=positive_float,
        default=100.0,
        metavar="TURNS",
        help="turns a second the soak produces (default 100)",
    )
    parser.add_argument(
        "--soak-minutes", type=positive_float, default=60.0, metavar="M", help="how long the soak runs (default 60)"
    )
    parser.add_argument(
        "--soak-sample-seconds",
        type=positive_float,
        default=30.0,
        metavar="S",
        help="between two samples of the soak (default 30)",
    )
    parser.add_argument(
        "--scale-out",
        action="store_true",
        help="scale-out alone: the same backlog drained by one worker and by two, each worker pinned to a core of its "
        "own where the machine has the cores; turns/s of each, their ratio (target 1.8x) and the CPU share of the "
        "broker and Redis meanwhile",
    )
    parser.add_argument(
        "--keep-logs",
        action="store_true",
        help="keep the logs of the workers and agents the bench started (removed when they stop, by default) and "
        "say where they are: what a worker logged when a figure went wrong",
    )
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    require_extra("tools")
    from turnstream_tools.benchmarks.command import run as run_bench

    return run_bench(args)
