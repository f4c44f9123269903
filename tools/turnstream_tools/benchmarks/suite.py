"""The whole suite: pure figures, then the live ones against a worker and its yardsticks, in a few minutes."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from pathlib import Path

from turnstream.settings import Settings
from turnstream_tools.benchmarks.agent_llm import compact_llm_figure, compact_llm_values
from turnstream_tools.benchmarks.agent_stream import (
    model_figure,
    prompt_sizes,
    proportioned,
    stream_figure,
    stream_values,
)
from turnstream_tools.benchmarks.agent_values import BUDGETS, HOLDOUT_SEEDS, agent_figure
from turnstream_tools.benchmarks.archive_reads import archive_reads
from turnstream_tools.benchmarks.children import Children
from turnstream_tools.benchmarks.churn import churn_memory
from turnstream_tools.benchmarks.cost import append_cost
from turnstream_tools.benchmarks.drain import drain_rate
from turnstream_tools.benchmarks.figures import Figure
from turnstream_tools.benchmarks.freshness import freshness
from turnstream_tools.benchmarks.live import Consumers, Live, create_topics, spawn
from turnstream_tools.benchmarks.long_reads import long_reads
from turnstream_tools.benchmarks.pinning import chosen_split
from turnstream_tools.benchmarks.prompt_size import prompt_size
from turnstream_tools.benchmarks.reads import read_latency
from turnstream_tools.benchmarks.recall import recall_figure
from turnstream_tools.benchmarks.retention import retention
from turnstream_tools.benchmarks.semantic_lag import semantic_lag
from turnstream_tools.benchmarks.stand_in_model import StandInModel, with_stand_in
from turnstream_tools.benchmarks.story import story_cases, story_figure
from turnstream_tools.samples.agent_traces import agent_traces
from turnstream_tools.samples.recall_set import RecallCase

Progress = Callable[[str], None]


@dataclass(frozen=True)
class Plan:
    """How much of each figure to measure."""

    drain_rounds: int
    drain_sessions: int
    drain_turns: int
    fresh_rounds: int
    fresh_sessions: int
    fresh_turns: int
    fresh_rate: float
    """Turns per second while measuring freshness: well below the worker's drain rate."""
    read_samples: int
    retention_conversations: int
    cost_rounds: int
    churn_sessions: int
    """Sessions the churn figure feeds each worker (`turnstream bench --sessions`)."""
    agent_traces: int
    """Generated agent traces of each domain the agent-values figure reads."""
    agent_holdout_seeds: tuple[int, ...]
    """Seeds of agent traces no rule was tuned on, measured apart (agent_values.HOLDOUT_SEEDS; none with --quick)."""
    pin: bool = True
    """Drain and freshness also pinned (the measured agent on a core of its own), beside unpinned (`--no-pin`: unpinned only)."""

    def to_dict(self) -> dict[str, float]:
        return asdict(self)


FULL = Plan(
    drain_rounds=5,
    drain_sessions=16,
    drain_turns=300,
    fresh_rounds=4,
    fresh_sessions=10,
    fresh_turns=60,
    fresh_rate=100.0,
    read_samples=3000,
    retention_conversations=10,
    cost_rounds=1000,
    churn_sessions=10_000,
    agent_traces=3,
    agent_holdout_seeds=HOLDOUT_SEEDS,
)
QUICK = Plan(
    drain_rounds=2,
    drain_sessions=8,
    drain_turns=100,
    fresh_rounds=2,
    fresh_sessions=4,
    fresh_turns=30,
    fresh_rate=100.0,
    read_samples=300,
    retention_conversations=2,
    cost_rounds=200,
    churn_sessions=2_000,
    agent_traces=1,
    agent_holdout_seeds=(),
)


def run_suite(
    settings: Settings,
    plan: Plan,
    children: Children,
    progress: Progress,
    recall: dict[str, list[RecallCase]],
    broker: str,
    locomo: Path | None = None,
) -> list[Figure]:
    """Every figure group in table order; the live consumers run in `children` and are stopped before the cost figure.
    The live figures are named after `broker`, the one `settings` reach; the offline ones after none."""
    consumers = Consumers.of(settings)
    asyncio.run(create_topics(consumers))
    spawn(consumers, children)
    progress("workers and pass-through agents starting; pure figures meanwhile")
    # pure and not speed-dependent: fine to run while the children boot
    sizes = prompt_size(settings)
    progress(f"prompt size: {sizes.rows[-1].a:,} vs {sizes.rows[-1].b:,} tokens after {sizes.rows[-1].measure[6:]}")
    kept = retention(plan.retention_conversations)
    progress(f"retention: {kept.rows[-1].a:.0f}% vs {kept.rows[-1].b:.0f}%")
    story = story_figure(story_cases(locomo))
    progress(f"story: {story.rows[-1].a:.0f}% vs full history {story.rows[-1].b:.0f}%")
    agents = run_agents(plan, progress)
    live = asyncio.run(_live_figures(consumers, plan, children, progress, recall))
    children.stop()  # the churn workers and the cost figure each want the machine to themselves
    churn = asyncio.run(churn_memory(settings, children, plan.churn_sessions, progress))
    progress("compaction cost per turn")
    cost = append_cost(plan.cost_rounds)
    return [*on_broker(broker, live), sizes, kept, cost, story, agents, *on_broker(broker, [churn])]


def run_agents(plan: Plan, progress: Progress) -> Figure:
    """The agent-values figure alone: offline, no service needed (`turnstream bench --agents-only`)."""
    progress("agent values: generated agent traces through compact and both yardsticks")
    figure = agent_figure(plan.agent_traces, holdout_seeds=plan.agent_holdout_seeds)
    kept = [figure.row(f"old values at {budget:,} vs anchors + tail").a for budget in BUDGETS]
    progress(f"agent values: {' and '.join(f'{share:.0f}%' for share in kept)} of old values kept")
    return figure


def run_agents_with_stand_in(plan: Plan, progress: Progress) -> list[Figure]:
    """Figure 13, then figure 16: the same traces through `compact --llm`'s strategies asking the stand-in model
    (`turnstream bench --agents-only --llm-stand-in`)."""
    offline = run_agents(plan, progress)
    progress("agent values through compact --llm, asking a stand-in model")
    model = StandInModel()
    try:
        seeds = (0, *plan.agent_holdout_seeds)
        measured = compact_llm_values(model, plan.agent_traces, seeds)
        return [offline, compact_llm_figure(measured, offline, len(model.invented()), model.answered)]
    finally:
        model.stop()


def run_broker_figures(
    settings: Settings, plan: Plan, children: Children, progress: Progress, broker: str
) -> list[Figure]:
    """The broker-bound figures alone (drain and freshness, each with its yardstick), named after `broker`:
    what `turnstream bench --broker both` measures on each broker after the first."""
    consumers = Consumers.of(settings)
    asyncio.run(create_topics(consumers))
    spawn(consumers, children)
    progress(f"workers and pass-through agents starting on {broker}")
    return on_broker(broker, asyncio.run(_broker_only(consumers, plan, children, progress)))


def with_local_models(settings: Settings) -> Settings:
    """`settings` with TURNSTREAM_EMBEDDINGS=local when it is left unset and the checkout's models are there (an
    explicit `off` measures words only)."""
    from turnstream.embeddings.factory import model_folder
    from turnstream.text.language import Language

    languages: tuple[Language, ...] = ("en", "zh")
    fetched = all((model_folder(None, language) / "manifest.json").is_file() for language in languages)
    unset = "embeddings" not in settings.model_fields_set
    return settings.model_copy(update={"embeddings": "local"}) if unset and fetched else settings


def on_broker(broker: str, figures: list[Figure]) -> list[Figure]:
    return [replace(figure, broker=broker) for figure in figures]


def run_recall(
    settings: Settings,
    plan: Plan,
    children: Children,
    progress: Progress,
    recall: dict[str, list[RecallCase]],
    broker: str,
) -> list[Figure]:
    """The recall figures alone (coverage, then read cost and memory of the archive, and reads on long messages):
    the worker only, embedding the archive with the local models when `make models` fetched them (the recall
    figure then reads both ways: with the semantic share and with words only)."""
    consumers = Consumers.of(with_local_models(settings))
    asyncio.run(create_topics(consumers))
    children.worker(consumers.pipeline)
    return on_broker(broker, asyncio.run(_recall_only(consumers, plan, children, progress, recall)))


def run_agent_stream(
    settings: Settings, plan: Plan, children: Children, progress: Progress, broker: str, stand_in: bool = False
) -> list[Figure]:
    """Figure 14 alone (`turnstream bench --agents-stream`): a worker for each prompt budget, its budgets in the
    defaults' proportions, and the agent traces replayed through each. With `stand_in`, figure 15 too: the same
    through workers whose LLM path asks a stand-in model, beside the offline workers."""
    offline = settings.model_copy(update={"openai_base_url": None})
    workers = {prompt: proportioned(offline, prompt) for prompt in prompt_sizes(settings)}
    model = StandInModel() if stand_in else None
    modelled = (
        {} if model is None else {prompt: proportioned(with_stand_in(settings, model), prompt) for prompt in workers}
    )
    try:
        for name, worker in [
            *((f"worker-agents-{prompt}", worker) for prompt, worker in workers.items()),
            *((f"worker-agents-{prompt}-llm", worker) for prompt, worker in modelled.items()),
        ]:
            asyncio.run(create_topics(Consumers(worker, worker, worker, worker)))
            children.worker(worker, name)
        first = next(iter(workers.values()))
        consumers = Consumers(first, first, first, first)
        return on_broker(
            broker, asyncio.run(_agent_stream(consumers, workers, modelled, model, plan, children, progress))
        )
    finally:
        if model is not None:
            model.stop()


async def _agent_stream(
    consumers: Consumers,
    workers: dict[int, Settings],
    modelled: dict[int, Settings],
    model: StandInModel | None,
    plan: Plan,
    children: Children,
    progress: Progress,
) -> list[Figure]:
    # Live wants the four consumers the suite feeds; here only workers run, so each slot names the first one (its
    # producer and Redis client serve every worker: turn_applied takes the worker it asks about)
    live = await Live.connect(consumers, children)
    try:
        traces = agent_traces(plan.agent_traces)
        progress(f"agents through the stream: {len(traces)} traces, prompts of {', '.join(map(str, workers))} tokens")
        offline = await stream_values(live, workers, traces, progress)
        seeds = plan.agent_holdout_seeds
        held_out = None
        if seeds:
            progress(f"agents through the stream: the held-out seeds {', '.join(map(str, seeds))}")
            others = [trace for seed in seeds for trace in agent_traces(plan.agent_traces, seed)]
            held_out = await stream_values(live, workers, others, progress)
        figures = [stream_figure(offline, workers, held_out, seeds)]
        if model is not None:
            progress("agents through the stream with the LLM path on (a stand-in model)")
            with_model = await stream_values(live, modelled, traces, progress, model.invented)
            figures.append(model_figure(with_model, offline, len(model.invented()), model.answered))
        return figures
    finally:
        await live.aclose()


async def _recall_only(
    consumers: Consumers, plan: Plan, children: Children, progress: Progress, recall: dict[str, list[RecallCase]]
) -> list[Figure]:
    live = await Live.connect(consumers, children)
    try:
        figures = [await recall_figure(live, recall, progress)]
        if consumers.pipeline.embeddings != "off":
            figures.append(await semantic_lag(live, progress))
        return [
            *figures,
            await archive_reads(consumers.pipeline, plan.read_samples, progress),
            await long_reads(consumers.pipeline, plan.read_samples, progress),
        ]
    finally:
        await live.aclose()


async def _broker_only(consumers: Consumers, plan: Plan, children: Children, progress: Progress) -> list[Figure]:
    live = await Live.connect(consumers, children)
    try:
        return await _broker_figures(live, plan, progress)
    finally:
        await live.aclose()


async def _live_figures(
    consumers: Consumers, plan: Plan, children: Children, progress: Progress, recall: dict[str, list[RecallCase]]
) -> list[Figure]:
    live = await Live.connect(consumers, children)
    try:
        drained, fresh = await _broker_figures(live, plan, progress)
        # a drained session: a context of full size, with memories for build_prompt to recall
        session = drained.data["last_session"]
        reads = await read_latency(live, session["session_id"], session["user_id"], plan.read_samples)
        progress("reads measured")
        recalled = await recall_figure(live, recall, progress)
        archived = await archive_reads(live.pipeline, plan.read_samples, progress)
        long = await long_reads(live.pipeline, plan.read_samples, progress)
        return [drained, fresh, reads, recalled, archived, long]
    finally:
        await live.aclose()


async def _broker_figures(live: Live, plan: Plan, progress: Progress) -> list[Figure]:
    """Drain and freshness, each with its yardstick, once every consumer has warmed up; pinned as the plan says,
    every process unpinned again after."""
    await live.warm_up()
    progress("consumers ready")
    split = chosen_split(plan.pin)
    try:
        drained = await drain_rate(live, plan.drain_rounds, plan.drain_sessions, plan.drain_turns, progress, split)
        fresh = await freshness(
            live, plan.fresh_rounds, plan.fresh_sessions, plan.fresh_turns, plan.fresh_rate, progress, split
        )
    finally:
        live.unpin(split)
    return [drained, fresh]
