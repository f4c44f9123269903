"""The soak (`turnstream bench --soak`): steady mixed chat and agent traffic through one worker with embeddings on,
sampled at intervals, and each sampled series' trend over the run (trend.py says what flat means).

Every sample reads the worker's RSS (its process and the embedding process below it, from /proc; and its process
alone, so a rise is placed on one of them), the worker
group's consumer lag on the turns topic, freshness p99 over the window (send until the worker publishes a context version
that includes the turn), Redis's used_memory over the owners produced so far, and the
embedder's lag p99 over the window (send until the turn's vector is in its owner's archive).
"""

from __future__ import annotations

import asyncio
import itertools
import time
from collections import deque
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from aiokafka import AIOKafkaConsumer, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient
from rich.console import Console, Group
from rich.live import Live as LiveDisplay
from rich.text import Text

from turnstream.connections import kafka_options
from turnstream.kafka.admin import ensure_topics, faust_app_id
from turnstream.kafka.end_offsets import fetched_end_offsets
from turnstream.kafka.groups import group_commits, records_behind
from turnstream.redis.keys import KeyLayout
from turnstream.schemas.ids import owner_key, session_key
from turnstream.settings import Settings
from turnstream.stats import percentile
from turnstream_tools.benchmarks.children import Children
from turnstream_tools.benchmarks.figures import Figure, Row, Target
from turnstream_tools.benchmarks.live import (
    READY_TIMEOUT_SECONDS,
    WARM_UP_TURNS,
    Consumers,
    Live,
    encode,
    last_versions,
    round_turns,
)
from turnstream_tools.benchmarks.pinning import rss_mb, tree_rss_mb
from turnstream_tools.benchmarks.trend import Trend, trend, warm_up_seconds
from turnstream_tools.samples.agent_traces import agent_traces
from turnstream_tools.samples.conversations import Replayable, generate_conversations, turns_of

CHATS, CHAT_TURNS = 30, 40
"""The generated chats the traffic cycles through (beside one agent trace of each domain and language)."""
SESSION_TTL_SECONDS = 60
"""The soak worker's TURNSTREAM_SESSION_TTL_SECONDS: every conversation is a new session that ends within seconds, so
with the default week the Table would hold every session of the run and RSS would grow with them (the churn figure
measures that); idle a minute, they expire and the worker holds a steady population, which a leak would show above."""
OPEN_SESSIONS = 24
"""Conversations under way at once; the next turn comes from the next of them in turn."""
VECTOR_PROBE_EVERY = 5
"""One user turn in this many is timed to its vector."""
VECTOR_POLL_SECONDS = 0.25
VECTOR_GIVE_UP_SECONDS = 120.0
"""A user turn with no vector after this long is counted as missed, not as a lag."""

SERIES: dict[str, tuple[str, str]] = {
    "worker_rss_mb": ("worker RSS", "MB"),
    "worker_process_rss_mb": ("worker process RSS, embedding process aside", "MB"),
    "consumer_lag": ("consumer lag", "turns"),
    "freshness_p99_ms": ("freshness p99", "ms"),
    "redis_bytes_per_owner": ("Redis memory per owner", "bytes"),
    "embedder_lag_p99_ms": ("embedder lag p99", "ms"),
}
"""Each sampled series: its name in a Sample, its label and unit."""


@dataclass(frozen=True)
class SoakPlan:
    rate: float
    """Turns a second."""
    minutes: float
    sample_seconds: float

    @property
    def seconds(self) -> float:
        return self.minutes * 60


@dataclass(frozen=True)
class Sample:
    """One look at the run, `at` seconds after the traffic started; None where the window held no measure."""

    at: float
    sent: int
    worker_rss_mb: float
    worker_process_rss_mb: float
    consumer_lag: int
    freshness_p99_ms: float | None
    redis_bytes_per_owner: float
    embedder_lag_p99_ms: float | None

    def describe(self) -> str:
        def ms(value: float | None) -> str:
            return "-" if value is None else f"{value:,.0f} ms"

        return (
            f"RSS {self.worker_rss_mb:,.0f} MB ({self.worker_process_rss_mb:,.0f} the worker's process) · lag {self.consumer_lag:,} turns · freshness p99 "
            f"{ms(self.freshness_p99_ms)} · Redis {self.redis_bytes_per_owner:,.0f} B/owner · embedder p99 "
            f"{ms(self.embedder_lag_p99_ms)}"
        )


def consumer_lag(committed: Mapping[int, int], ends: Mapping[int, int]) -> int:
    """Turns written and not yet committed by the group, over every partition (a partition with no commit counts
    from 0; a commit past a listed end, which Tansu's short listing allows, counts as none behind)."""
    return sum(records_behind(end, committed.get(partition)) for partition, end in ends.items())


def p99_ms(seconds: Sequence[float]) -> float | None:
    return percentile(seconds, 99) * 1000 if seconds else None


class MixedTraffic:
    """An endless stream of turns: generated chats and agent traces, alternately, OPEN_SESSIONS of them under way
    at once. Each conversation is replayed as a new session of a new user, so the owners grow with the run and
    Redis's memory is compared per owner."""

    def __init__(self, seed: int = 0) -> None:
        chats: list[Replayable] = list(generate_conversations(CHATS, CHAT_TURNS, seed))
        traces: list[Replayable] = list(agent_traces(1, seed))
        self._pool = [each for pair in itertools.zip_longest(chats, traces) for each in pair if each is not None]
        self.owners = 0
        self._open = [self._conversation() for _ in range(OPEN_SESSIONS)]
        self._next = itertools.cycle(range(OPEN_SESSIONS))

    def _conversation(self) -> deque[dict[str, Any]]:
        sample = self._pool[self.owners % len(self._pool)]
        turns = turns_of(sample, f"soak-{self.owners}")
        for turn in turns:
            turn["user_id"] = f"{sample.user_id}-{self.owners}"
        self.owners += 1
        return deque(turns)

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return self

    def __next__(self) -> dict[str, Any]:
        slot = next(self._next)
        turn = self._open[slot].popleft()
        if not self._open[slot]:
            self._open[slot] = self._conversation()
        return turn


@dataclass
class Window:
    """What the watchers measured since the last sample, in seconds."""

    freshness: list[float] = field(default_factory=list)
    vectors: list[float] = field(default_factory=list)

    def take(self) -> tuple[float | None, float | None]:
        """(freshness p99, embedder lag p99) in ms, and an empty window after."""
        out = p99_ms(self.freshness), p99_ms(self.vectors)
        self.freshness, self.vectors = [], []
        return out


@dataclass
class Watch:
    """The turns sent and not yet readable (per session key, version and send time, oldest first) and the user
    turns not yet embedded ((owner, archive position) -> send time)."""

    contexts: dict[str, deque[tuple[int, float]]] = field(default_factory=dict)
    vectors: dict[tuple[str, str], float] = field(default_factory=dict)
    window: Window = field(default_factory=Window)
    missed_vectors: int = 0
    user_turns: int = 0

    def sent(self, turn: dict[str, Any], at: float) -> None:
        key = session_key(turn["session_id"], turn.get("tenant"))
        # one version a turn, from a new session's first: the turn of seq n is in version n + 1
        self.contexts.setdefault(key, deque()).append((turn["seq"] + 1, at))
        message = turn["message"]
        self.user_turns += message.get("role") == "user"
        # a probe every VECTOR_PROBE_EVERY user turns: the looks stay cheap while the embedder is behind
        if (
            message.get("role") == "user"
            and isinstance(message.get("content"), str)
            and (self.user_turns - 1) % VECTOR_PROBE_EVERY == 0
        ):
            owner = owner_key(turn.get("user_id"), turn.get("tenant"), turn["session_id"])
            self.vectors[(owner, f"{key}#{turn['seq']}")] = at

    def published(self, channel: str, version: int, now: float) -> None:
        """A context's new version, as the worker publishes it on `P:updates:S`: the turns it includes are readable."""
        key = channel.split(":updates:", 1)[1]
        waiting = self.contexts.get(key)
        while waiting and waiting[0][0] <= version:
            self.window.freshness.append(now - waiting.popleft()[1])
        if waiting is not None and not waiting:
            del self.contexts[key]

    async def contexts_until(self, live: Live, stop: asyncio.Event) -> None:
        """Hear every context version the worker publishes, until `stop`: no polling, whatever the backlog."""
        pubsub = live.redis.pubsub()
        await pubsub.psubscribe(live.store.layout.updates_channel("*"))
        try:
            while not stop.is_set():
                message = await pubsub.get_message(ignore_subscribe_messages=True, timeout=0.5)
                if message is not None:
                    self.published(message["channel"].decode(), int(message["data"]), time.monotonic())
        finally:
            await pubsub.aclose()

    async def vectors_until(self, live: Live, stop: asyncio.Event) -> None:
        """Look for the probed turns' vectors every VECTOR_POLL_SECONDS, until `stop`."""
        keys = KeyLayout(live.pipeline.topic_prefix)
        while not stop.is_set():
            waiting = list(self.vectors)
            if waiting:
                async with live.redis.pipeline(transaction=False) as pipe:
                    for owner, position in waiting:
                        pipe.hget(keys.owner(owner).positions, position)
                    shorts = await pipe.execute()
                    held = [(item, short) for item, short in zip(waiting, shorts) if short is not None]
                    for (owner, _), short in held:
                        pipe.hexists(keys.owner(owner).vectors, short)
                    there = await pipe.execute()
                now = time.monotonic()
                for (item, _), present in zip(held, there):
                    if present:
                        self.window.vectors.append(now - self.vectors.pop(item))
                for item in [item for item, at in self.vectors.items() if now - at > VECTOR_GIVE_UP_SECONDS]:
                    del self.vectors[item]
                    self.missed_vectors += 1
            await asyncio.sleep(VECTOR_POLL_SECONDS)


async def group_lag(settings: Settings, admin: AIOKafkaAdminClient, consumer: AIOKafkaConsumer) -> int:
    """The worker group's consumer lag on the turns topic, now (ends confirmed by a fetch: Tansu lists them short)."""
    partitions = [TopicPartition(settings.turns_topic, p) for p in range(settings.turn_partitions)]
    committed = await group_commits(
        admin, faust_app_id(settings), settings.turns_topic, range(settings.turn_partitions)
    )
    ends = await fetched_end_offsets(kafka_options(settings), await consumer.end_offsets(partitions))
    return consumer_lag(committed, {tp.partition: end for tp, end in ends.items()})


@dataclass
class Soak:
    """The run's state the display shows."""

    plan: SoakPlan
    started: float = field(default_factory=time.monotonic)
    sent: int = 0
    samples: list[Sample] = field(default_factory=list)

    def elapsed(self) -> float:
        return time.monotonic() - self.started

    def render(self) -> Group:
        elapsed = self.elapsed()
        head = (
            f"soak {elapsed / 60:5.1f} / {self.plan.minutes:g} min · {self.sent:,} turns sent "
            f"({self.sent / max(elapsed, 1e-9):,.0f}/s of {self.plan.rate:g}) · {len(self.samples)} samples"
        )
        latest = self.samples[-1].describe() if self.samples else "first sample after the first window"
        return Group(Text(head), Text(f"latest: {latest}"))


async def soak(live: Live, worker_pid: int, plan: SoakPlan, console: Console) -> tuple[list[Sample], Soak, Watch]:
    """Produce the mixed traffic at plan.rate for plan.minutes, sampling every plan.sample_seconds, with a live
    display on `console`."""
    settings = live.pipeline
    traffic, watch = MixedTraffic(), Watch()
    admin = AIOKafkaAdminClient(**kafka_options(settings))
    consumer = AIOKafkaConsumer(**kafka_options(settings), group_id=None, enable_auto_commit=False)
    await admin.start()
    await consumer.start()
    state = Soak(plan)

    async def produce() -> None:
        for index, turn in enumerate(traffic):
            if state.elapsed() >= plan.seconds:
                return
            await asyncio.sleep(max(0.0, state.started + index / plan.rate - time.monotonic()))
            watch.sent(turn, time.monotonic())
            await live.send(settings, encode([turn]))
            state.sent += 1

    async def sample_every() -> None:
        for index in itertools.count(1):
            if index * plan.sample_seconds > plan.seconds:
                return
            await asyncio.sleep(max(0.0, state.started + index * plan.sample_seconds - time.monotonic()))
            live.children.check()
            freshness, vectors = watch.window.take()
            info = await live.redis.info("memory")
            state.samples.append(
                Sample(
                    at=state.elapsed(),
                    sent=state.sent,
                    worker_rss_mb=tree_rss_mb(worker_pid),
                    worker_process_rss_mb=rss_mb(worker_pid),
                    consumer_lag=await group_lag(settings, admin, consumer),
                    freshness_p99_ms=freshness,
                    redis_bytes_per_owner=int(info["used_memory"]) / max(traffic.owners, 1),
                    embedder_lag_p99_ms=vectors,
                )
            )

    stop = asyncio.Event()

    async def run() -> None:
        try:
            await asyncio.gather(produce(), sample_every())
        finally:
            stop.set()

    try:
        with LiveDisplay(get_renderable=state.render, console=console, refresh_per_second=1):
            # the watchers in the same gather: one that fails ends the run, not a figure without its measures
            await asyncio.gather(run(), watch.contexts_until(live, stop), watch.vectors_until(live, stop))
        console.line()  # a display that is not a terminal's ends without one
    finally:
        await consumer.stop()
        await admin.close()
    return state.samples, state, watch


def trends(samples: Sequence[Sample], since_seconds: float) -> dict[str, Trend]:
    """Each series' trend over the samples from `since_seconds` into the run on; a series with fewer than two such
    samples has none."""
    out = {}
    for name in SERIES:
        points = [(s.at, value) for s in samples if s.at >= since_seconds and (value := getattr(s, name)) is not None]
        if len(points) >= 2:
            out[name] = trend([at for at, _ in points], [value for _, value in points])
    return out


def soak_figure(samples: Sequence[Sample], plan: SoakPlan, sent: int, seconds: float, missed_vectors: int) -> Figure:
    """A row a series: its slope per hour beside the slope's standard error (their ratio is the t statistic), after
    the warm-up; the rate produced beside the rate asked; flat everywhere is the target. Each row also says how the
    run's second half trends: a series still warming up past the warm-up (a cache filling to its cap) rises in the
    first half only, a leak in both."""
    warm_up = warm_up_seconds(plan.seconds)
    found, second_half = trends(samples, warm_up), trends(samples, plan.seconds / 2)
    rows = [Row.of("turns sent a second vs asked", "turns/s", sent / seconds if seconds else 0.0, plan.rate)]
    for name, (label, unit) in SERIES.items():
        if name in found:
            each = found[name]
            verdict = "flat" if each.flat else f"not flat ({each.change:+,.4g} {unit} over the run)"
            if (half := second_half.get(name)) is not None:
                verdict += f"; second half {'flat' if half.flat else 'not flat'} ({half.slope_per_hour:+,.4g} {unit}/h)"
            rows.append(
                Row.of(f"{label} slope ± SE: {verdict}", f"{unit}/h", each.slope_per_hour, each.stderr_per_hour)
            )
    met = len(found) == len(SERIES) and all(each.flat for each in found.values())
    return Figure(
        "soak",
        f"Soak: {plan.rate:g} turns/s for {plan.minutes:g} min, trends after a {warm_up:.0f} s warm-up",
        "slope per hour",
        "its standard error",
        rows,
        Target("every series flat: |slope × hours| ≤ 2 × max(SE × hours, residual SD)", met),
        {
            "plan": asdict(plan),
            "sent": sent,
            "seconds": seconds,
            "warm_up_seconds": warm_up,
            "missed_vectors": missed_vectors,
            "trends": {name: each.to_dict() for name, each in found.items()},
            "trends_second_half": {name: each.to_dict() for name, each in second_half.items()},
            "samples": [asdict(sample) for sample in samples],
        },
    )


def run_soak(settings: Settings, plan: SoakPlan, children: Children, progress: Callable[[str], None]) -> Figure:
    """One worker on `settings` (embeddings local when the checkout's models are there), warmed up, then the soak."""
    from turnstream_tools.benchmarks.suite import with_local_models

    worker = with_local_models(settings).model_copy(update={"session_ttl_seconds": SESSION_TTL_SECONDS})
    asyncio.run(ensure_topics(worker))
    pid = children.worker(worker).process.pid
    progress(f"soak: worker {pid} starting, embeddings {worker.embeddings}")
    return asyncio.run(_soak(Consumers(worker, worker, worker, worker), pid, plan, children, progress))


async def _soak(
    consumers: Consumers, pid: int, plan: SoakPlan, children: Children, progress: Callable[[str], None]
) -> Figure:
    live = await Live.connect(consumers, children)
    try:
        warm = round_turns("soak-warm-up", 4, WARM_UP_TURNS, seed=99)
        await live.send(live.pipeline, encode(warm))
        await live.until(live.versions_reached(last_versions(warm)), "warm-up of the worker", READY_TIMEOUT_SECONDS)
        progress(f"soak: worker ready; {plan.rate:g} turns/s for {plan.minutes:g} min")
        samples, state, watch = await soak(live, pid, plan, Console(stderr=True))
        figure = soak_figure(samples, plan, state.sent, min(state.elapsed(), plan.seconds), watch.missed_vectors)
        progress(f"soak: {len(samples)} samples, target {'met' if figure.target and figure.target.met else 'not met'}")
        return figure
    finally:
        await live.aclose()
