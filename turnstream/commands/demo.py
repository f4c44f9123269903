"""`turnstream demo`: the main job on the embedded default, end to end, with a report."""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import orjson
from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

from turnstream.cli import CliError, require_extra
from turnstream.commands._args import positive_int
from turnstream.commands._services import client_logging
from turnstream.settings import Settings
from turnstream.stack.processes import start_worker, stop_process
from turnstream.stack.services import StackError, free_port, provisioned

if TYPE_CHECKING:
    from turnstream.demo.plan import DemoSession


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "demo",
        help="replay sample conversations through Kafka and show the compacted contexts (about a minute)",
        description=(
            "Start the embedded broker and Redis (unless TURNSTREAM_KAFKA_URL / TURNSTREAM_REDIS_URL are set) "
            "and a worker, replay the shipped sample conversations (a ReAct travel agent, a Chinese companion "
            "chat, a support conversation with corrections) and generated ones through Kafka, wait until every "
            "context is current, print a report, and stop everything it started."
        ),
    )
    parser.add_argument(
        "--sessions",
        type=positive_int,
        default=12,
        help="conversations to replay (default 12: 3 samples + 9 generated)",
    )
    parser.add_argument(
        "--turns",
        type=positive_int,
        default=None,
        help="messages per conversation (default: samples whole, generated 150)",
    )
    parser.add_argument(
        "--budget-tokens", type=positive_int, default=2000, help="context budget per session (default 2000)"
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of the generated conversations")
    parser.add_argument("--timeout", type=positive_int, default=300, help="seconds to wait for the worker to catch up")
    parser.add_argument("--json", action="store_true", help="print the report as JSON instead of tables")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    require_extra("worker")
    # the demo's modules are the turnstream-tools distribution's (decision 0036): imported only to run it
    from turnstream.demo.plan import plan_sessions
    from turnstream.demo.render import render
    from turnstream.demo.run import DemoError

    plan = plan_sessions(args.sessions, args.turns, args.seed)
    console = Console(stderr=True)
    client_logging()
    configured = Settings()
    # the embedded broker cannot issue producer ids: do not even try (BROKER.md)
    idempotence = configured.idempotent_producer if configured.kafka_url else "off"
    try:
        with provisioned(configured) as provisioned_settings:
            settings = provisioned_settings.model_copy(
                update={
                    "budget_tokens": args.budget_tokens,
                    "metrics_port": free_port(),
                    "idempotent_producer": idempotence,
                }
            )
            report = _run_with_worker(settings, plan, args.timeout, console)
    except (StackError, DemoError) as error:
        raise CliError(str(error)) from None
    if args.json:
        sys.stdout.write(orjson.dumps(report, option=orjson.OPT_INDENT_2).decode() + "\n")
    else:
        render(report, Console())
    return 0


def _run_with_worker(settings: Settings, plan: list[DemoSession], timeout: float, console: Console) -> dict[str, Any]:
    from turnstream.demo.run import check_services

    asyncio.run(check_services(settings))
    with tempfile.NamedTemporaryFile(prefix="turnstream-demo-worker-", suffix=".log") as log:
        worker = start_worker(settings, log, loglevel="warning")
        try:
            return asyncio.run(_live(settings, plan, lambda: worker.poll() is None, timeout, console))
        finally:
            stop_process(worker)


async def _live(
    settings: Settings, plan: list[DemoSession], worker_alive: Callable[[], bool], timeout: float, console: Console
) -> dict[str, Any]:
    from turnstream.demo.run import final_prompt, read_latencies, replay, session_rows, stage_latencies, summarize

    columns = (TextColumn("{task.description}"), BarColumn(), TextColumn("{task.fields[status]}"), TimeElapsedColumn())
    with Progress(*columns, console=console, transient=False) as progress:
        task = progress.add_task("turns through Kafka → Redis", total=1, status="starting")

        def show(produced: int, applied: int, planned: int) -> None:
            status = f"produced {produced}/{planned} · applied {applied} · lag {produced - applied}"
            progress.update(task, total=planned, completed=applied, status=status)

        live = await replay(settings, plan, worker_alive, show, timeout)
    showcase = next((s for s in plan if s.sample.language == "zh"), plan[0])
    prompt = await final_prompt(settings, showcase)
    reads = summarize(await read_latencies(settings, showcase))
    return {
        "sessions": session_rows(plan, live.docs),
        "prompt": prompt,
        "latency_ms": {**stage_latencies(f"http://{settings.web_bind}:{settings.metrics_port}/metrics"), **reads},
        "turns": live.turns,
        "elapsed_seconds": live.elapsed_seconds,
        "throughput_turns_per_s": live.turns / live.elapsed_seconds,
        "budget_tokens": settings.budget_tokens,
    }
