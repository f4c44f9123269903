"""`turnstream demo` run: the embedded default (or the configured URLs), a worker, the planned conversations replayed
with a progress bar, and the report; `turnstream.commands.demo` holds the command's arguments and calls `run`."""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
from collections.abc import Callable
from typing import Any

import orjson
from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

from turnstream.cli import CliError
from turnstream.settings import Settings
from turnstream.stack.processes import start_worker, stop_process
from turnstream.stack.services import StackError, free_port, provisioned
from turnstream_tools.demo.plan import DemoSession, plan_sessions
from turnstream_tools.demo.render import render
from turnstream_tools.demo.run import (
    DemoError,
    check_services,
    final_prompt,
    read_latencies,
    replay,
    session_rows,
    stage_latencies,
    summarize,
)


def run(args: argparse.Namespace) -> int:
    plan = plan_sessions(args.sessions, args.turns, args.seed)
    console = Console(stderr=True)
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
