"""`turnstream shadow run`'s progress display: records consumed against the live turns topic's ends, lag, turns/s
and the LLM calls, read in the shadow's own process (its consumer's commits and high watermarks) every few seconds.
A terminal gets one line redrawn in place (rich); anything else a line every LOG_SECONDS."""

from __future__ import annotations

import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import faust
import orjson
from prometheus_client import REGISTRY
from rich.console import Console
from rich.live import Live

from turnstream.kafka.faust_private.consumer import committed_offsets
from turnstream.kafka.groups import records_behind
from turnstream.kafka.timers import timer
from turnstream.logs import LogFormat
from turnstream.settings import Settings

TERMINAL_SECONDS = 1.0
LOG_SECONDS = 10.0
LLM_OUTCOMES = ("ok", "failed", "capped")


@dataclass(frozen=True)
class Look:
    """What the shadow's consumer says at one moment, over the turns partitions it holds."""

    at: float
    """time.monotonic() of the look."""
    committed: int
    """Records committed, summed over its partitions."""
    end: int
    """The high watermarks, summed (a partition not fetched yet counts its commit)."""
    llm: Mapping[str, float]
    """llm_requests_total by outcome, of LLM_OUTCOMES."""


def progress_line(name: str, look: Look, before: Look | None, llm_cap: int | None) -> str:
    """One line: consumed/end, lag, turns/s since the look before, the LLM calls (answered, failed, capped)."""
    rate = (
        0.0 if before is None or look.at <= before.at else (look.committed - before.committed) / (look.at - before.at)
    )
    llm = look.llm
    calls = f"LLM {llm.get('ok', 0):.0f} ok, {llm.get('failed', 0):.0f} failed"
    if llm_cap is not None:
        calls += f", cap {llm_cap}, {llm.get('capped', 0):.0f} past it"
    return (
        f"shadow {name}: consumed {look.committed}/{look.end}, lag {records_behind(look.end, look.committed)}, "
        f"{max(rate, 0.0):.1f} turns/s, {calls}"
    )


def look_now(app: faust.App, settings: Settings) -> Look:
    consumer = app.consumer
    committed = committed_offsets(consumer)
    done = end = 0
    for tp in consumer.assignment():
        if tp.topic != settings.turns_topic:
            continue
        at = committed.get(tp) or 0
        try:
            highwater = consumer.highwater(tp)
        except AssertionError:  # a rebalance took the partition meanwhile
            continue
        done, end = done + at, end + max(highwater or 0, at)
    llm = {
        outcome: REGISTRY.get_sample_value("turnstream_llm_requests_total", {"outcome": outcome}) or 0.0
        for outcome in LLM_OUTCOMES
    }
    return Look(time.monotonic(), done, end, llm)


class ProgressDisplay:
    """A terminal's one line redrawn in place (rich's Live, started at the first line), else lines: under
    TURNSTREAM_LOG_FORMAT=json each a JSON object, as every other line the worker writes."""

    def __init__(self, console: Console | None = None, fmt: LogFormat = "text") -> None:
        # bound to stderr as it is now: the Faust worker replaces sys.stderr with its logger once it starts
        self.console = console or Console(file=sys.stderr)
        self.json = fmt == "json"
        self.live: Live | None = None

    @property
    def redrawn(self) -> bool:
        return self.console.is_terminal and not self.json

    @property
    def interval(self) -> float:
        return TERMINAL_SECONDS if self.redrawn else LOG_SECONDS

    def show(self, line: str) -> None:
        if not self.redrawn:
            text = orjson.dumps({"message": line}).decode() if self.json else line
            self.console.print(text, highlight=False, soft_wrap=True, markup=False)
            return
        if self.live is None:
            self.live = Live(console=self.console, auto_refresh=False)
            self.live.start()
        self.live.update(line, refresh=True)

    def close(self) -> None:
        if self.live is not None:
            self.live.stop()


def register_progress(app: faust.App, settings: Settings, display: ProgressDisplay) -> None:
    """Show the shadow's progress on `display` while the worker runs."""
    looks: list[Look] = []

    @timer(app, display.interval, name=f"{settings.topic_prefix}.shadow_progress")
    async def show_progress() -> None:
        look = look_now(app, settings)
        display.show(progress_line(settings.topic_prefix, look, looks[-1] if looks else None, settings.llm_max_calls))
        looks[:] = [look]


def register_running_mark(app: faust.App, settings: Settings) -> None:
    """Keep the shadow's running mark in Redis fresh while the worker runs, and clear it when it stops (`turnstream
    shadow drop` reads it)."""
    from turnstream.redis.connect import redis_client
    from turnstream.redis.shadow_mark import RUNNING_MARK_SECONDS, clear_running_mark, renew_running_mark

    redis = redis_client(settings)

    @timer(app, RUNNING_MARK_SECONDS, name=f"{settings.topic_prefix}.shadow_running")
    async def renew() -> None:
        await renew_running_mark(redis, settings.topic_prefix)

    async def clear(sender: Any, /, *args: Any, **kwargs: Any) -> None:  # after the consumer stopped
        await clear_running_mark(redis, settings.topic_prefix)
        await redis.aclose()

    app.on_before_shutdown.connect(clear)
