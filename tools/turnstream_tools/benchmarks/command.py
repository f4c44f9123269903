"""`turnstream bench` run: the embedded stack (or the configured URLs) per broker, the suite's figures on it, and the
table, JSON and plot; `turnstream.commands.bench` holds the command's arguments and calls `run`."""

from __future__ import annotations

import argparse
import dataclasses
import os
import platform
import signal
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from turnstream.cli import CliError, require_extra
from turnstream.settings import Settings
from turnstream.stack.services import EmbeddedStack, StackError, started_for
from turnstream_tools.benchmarks.figures import Figure

CONFIGURED = "configured"
"""The broker name the figures carry when TURNSTREAM_KAFKA_URL is set."""
ALONE_PLACEMENTS = {"--soak": "unpinned", "--scale-out": "each worker pinned as the figure's data says"}
"""Where the processes of a figure measured alone run, for the table's title, where the suite's pinning is not it."""


def _stop_on_sigterm() -> None:
    """SIGTERM unwinds like Ctrl-C, so every child is stopped on the way out."""

    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, interrupt)


def run(args: argparse.Namespace) -> int:
    if args.agents_only:
        return _run_agents(args)
    require_extra("worker")
    from turnstream_tools.benchmarks.children import ChildDied, Children
    from turnstream_tools.benchmarks.live import BenchTimeout
    from turnstream_tools.benchmarks.pinning import chosen_split, describe
    from turnstream_tools.benchmarks.report import PlotUnavailable, print_stages, print_table, write_json, write_plot
    from turnstream_tools.benchmarks.scale_out import run_scale_out
    from turnstream_tools.benchmarks.soak import SoakPlan, run_soak
    from turnstream_tools.benchmarks.suite import (
        FULL,
        QUICK,
        on_broker,
        run_agent_stream,
        run_broker_figures,
        run_recall,
        run_suite,
    )

    if args.plot is not None:
        _check_matplotlib()
    configured = Settings()
    alone = _alone(args)
    brokers = _brokers(args.broker, configured, alone is not None)
    recall = _recall_cases(args.locomo)
    _stop_on_sigterm()
    plan = QUICK if args.quick else FULL
    if args.sessions is not None:
        plan = dataclasses.replace(plan, churn_sessions=args.sessions)
    plan = dataclasses.replace(plan, pin=args.pin)
    started = time.monotonic()

    def progress(message: str) -> None:
        print(f"[bench {time.monotonic() - started:6.1f}s] {message}", file=sys.stderr, flush=True)

    # a prefix of its own: a configured broker's real topics are never touched
    prefix = f"{configured.topic_prefix}-bench-{int(time.time())}"
    figures: list[Figure] = []
    pids: dict[str, int] = {}
    kept: list[tuple[str, dict[str, str]]] = []
    """Each stack's suffix and its children's logs, when --keep-logs keeps them."""
    try:
        for broker in brokers:
            first = broker == brokers[0]
            # each broker its own stack, one after the other; a later one's names (prefix, pids) carry its name
            suffix = "" if first else f"@{broker}"
            named = configured.model_copy(update={"topic_prefix": prefix if first else f"{prefix}-{broker}"})
            services = started_for(named, "kafka" if broker == "kafka" else "tansu")
            with (
                services as (stack, settings),
                Children(services=_pids(stack), keep_logs=args.keep_logs) as children,
            ):
                pids.update({name + suffix: pid for name, pid in _pids(stack).items()})
                kept.append((suffix, children.kept))
                progress(settings.redact(f"{broker} broker {settings.kafka_url}, Redis {settings.redis_url}"))
                if args.soak:
                    soak_plan = SoakPlan(args.soak_rate, args.soak_minutes, args.soak_sample_seconds)
                    figures += on_broker(broker, [run_soak(settings, soak_plan, children, progress)])
                elif args.scale_out:
                    figures += on_broker(broker, [run_scale_out(settings, plan, children, progress)])
                elif args.recall_only:
                    figures += run_recall(settings, plan, children, progress, recall, broker)
                elif args.agents_stream:
                    figures += run_agent_stream(settings, plan, children, progress, broker, args.llm_stand_in)
                elif first:
                    figures += run_suite(settings, plan, children, progress, recall, broker, args.locomo)
                else:
                    figures += run_broker_figures(settings, plan, children, progress, broker)
                pids.update({name + suffix: pid for name, pid in children.spawned.items()})
    except (StackError, ChildDied, BenchTimeout) as error:
        raise CliError(str(error)) from None
    finally:  # a bench that failed is when a worker's log is wanted most
        for suffix, logs in kept:
            for name, path in logs.items():
                progress(f"{name}{suffix}'s log kept: {path}")
    wall = time.monotonic() - started
    options = f"{' --quick' if args.quick else ''}{f' --broker {args.broker}' if args.broker else ''}"
    options += "" if args.pin else " --no-pin"
    if args.soak:
        options += f" --soak --soak-rate {args.soak_rate:g} --soak-minutes {args.soak_minutes:g} --soak-sample-seconds {args.soak_sample_seconds:g}"
    options += " --scale-out" if args.scale_out else ""
    options += " --llm-stand-in" if args.llm_stand_in else ""
    placement = ALONE_PLACEMENTS.get(alone or "") or describe(chosen_split(plan.pin), plan.pin)
    title = (
        f"turnstream bench{options} · {_machine()['nproc']} cores · {placement} · "
        f"Python {platform.python_version()} · {wall:.0f}s"
    )
    print_table(figures, title)
    print_stages(figures)
    if args.json is not None:
        meta = _meta(configured, plan.to_dict(), args.quick, wall, pids, brokers)
        write_json(args.json, figures, meta)
        progress(f"figures written to {args.json}")
    if args.plot is not None:
        try:
            write_plot(args.plot, figures)
        except PlotUnavailable as error:
            raise CliError(str(error)) from None
        progress(f"plot written to {args.plot}")
    return 0


def _run_agents(args: argparse.Namespace) -> int:
    """`--agents-only`: the offline agent figure, its table per domain, and the JSON when asked."""
    require_extra("tools")
    require_extra("langchain")  # the trim_messages yardstick
    from turnstream_tools.benchmarks.report import print_stages, print_table, write_json
    from turnstream_tools.benchmarks.suite import FULL, QUICK, run_agents, run_agents_with_stand_in

    plan = QUICK if args.quick else FULL
    started = time.monotonic()

    def progress(message: str) -> None:
        print(f"[bench {time.monotonic() - started:6.1f}s] {message}", file=sys.stderr, flush=True)

    figures = run_agents_with_stand_in(plan, progress) if args.llm_stand_in else [run_agents(plan, progress)]
    wall = time.monotonic() - started
    options = (" --quick" if args.quick else "") + (" --llm-stand-in" if args.llm_stand_in else "")
    title = f"turnstream bench --agents-only{options} · Python {platform.python_version()} · {wall:.0f}s"
    print_table(figures, title)
    print_stages(figures)
    if args.json is not None:
        meta = {
            "date": datetime.now(UTC).isoformat(timespec="seconds"),
            "machine": _machine(),
            "quick": args.quick,
            "plan": plan.to_dict(),
            "wall_seconds": round(wall, 1),
        }
        write_json(args.json, figures, meta)
        progress(f"figures written to {args.json}")
    return 0


def _alone(args: argparse.Namespace) -> str | None:
    """The one figure asked for alone (--recall-only, --agents-stream, --soak, --scale-out), or None for the
    suite; two of them together are a one-line error."""
    chosen = [
        flag
        for flag, asked in (
            ("--recall-only", args.recall_only),
            ("--agents-stream", args.agents_stream),
            ("--soak", args.soak),
            ("--scale-out", args.scale_out),
        )
        if asked
    ]
    if len(chosen) > 1:
        raise CliError(f"{' and '.join(chosen)}: each measures its figure alone; ask for one")
    if args.llm_stand_in and not args.agents_stream:
        raise CliError(
            "--llm-stand-in: the stand-in model serves the agent traces; add --agents-stream or --agents-only"
        )
    return chosen[0] if chosen else None


def _pids(stack: EmbeddedStack) -> dict[str, int]:
    return {service.name: service.process.pid for service in stack.services}


def _brokers(chosen: str | None, configured: Settings, one_figure: bool) -> list[str]:
    """The brokers to measure on, in order: the configured one, or those `--broker` names (default Tansu)."""
    if configured.kafka_url is not None:
        if chosen is not None:
            raise CliError(
                f"--broker {chosen}: TURNSTREAM_KAFKA_URL is set, and the bench measures that broker; "
                "unset it to start an embedded one"
            )
        return [CONFIGURED]
    if chosen == "both":
        if one_figure:
            raise CliError(
                "--recall-only, --agents-stream, --soak and --scale-out measure one figure on one broker: --broker "
                "both would measure nothing more"
            )
        return ["tansu", "kafka"]
    return [chosen or "tansu"]


def _recall_cases(locomo: Path | None) -> dict[str, Any]:
    """The recall figure's chats; a LoCoMo folder without the development files is a one-line error."""
    from turnstream_tools.benchmarks.recall import LOCOMO_DEV, recall_cases

    if locomo is not None:
        missing = [name for name in LOCOMO_DEV if not (locomo / name).is_file()]
        if missing:
            raise CliError(
                f"--locomo {locomo}: missing {', '.join(missing)} (the development split of data/locomo10.zip)"
            )
    try:
        return recall_cases(locomo)
    except (OSError, ValueError, KeyError) as error:
        raise CliError(f"--locomo {locomo}: cannot read the conversations: {error}") from None


def _check_matplotlib() -> None:
    """Fail before minutes of measuring, not after."""
    import importlib.util

    if importlib.util.find_spec("matplotlib") is None:
        raise CliError("--plot needs matplotlib: pip install 'turnstream[bench]'")


def _machine() -> dict[str, Any]:
    return {"nproc": len(os.sched_getaffinity(0)), "python": platform.python_version(), "platform": platform.platform()}


def _meta(
    configured: Settings, plan: dict[str, Any], quick: bool, wall: float, pids: dict[str, int], brokers: list[str]
) -> dict[str, Any]:
    return {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": _machine(),
        "quick": quick,
        "plan": plan,
        "wall_seconds": round(wall, 1),
        "services": {
            "kafka": "configured" if configured.kafka_url else "embedded",
            "redis": "configured" if configured.redis_url else "embedded",
        },
        "brokers": brokers,
        "pids": pids,
    }
