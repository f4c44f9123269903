"""Figure 14: agent values through the stream: the agent traces produced through Kafka and a worker, and at each
tool call the prompt `build_prompt` gives for the newest user message, against anchors plus the newest tail.

Each trace is one session. Its turns are produced up to a tool call, the bench waits until the worker has applied
them (the context's version), then asks `build_prompt`; then the turns up to the next call. So every prompt is read
at its point in time, with the archive holding only what was said before it, and no session is produced twice.
A prompt budget P is measured with a worker of its own whose budgets keep the defaults' proportions (the context
`budget_tokens` / `prompt_budget_tokens` of P, the memory block `recall_budget_tokens` / `prompt_budget_tokens`): at
P = 4,000 and at the defaults. The needed values, their old share and the left-out calls are figure 13's
(agent_values.py); the yardstick is the bare interceptor's anchors and newest whole units within the same P.

Figure 15 (`--llm-stand-in`): the same replay through workers whose LLM path is on, against a stand-in model
(stand_in_model.py) that also invents a booking reference in every extraction: each budget's figure with the model
beside the offline worker's, and the prompts that hold an invented reference (none may).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from turnstream.client import ContextClient
from turnstream.compaction.messages import MessageError, validate_messages
from turnstream.schemas.ids import session_key
from turnstream.settings import Settings
from turnstream.stack.services import free_port
from turnstream.text.chat import Message, content_text
from turnstream.text.language import detect_language
from turnstream.text.tokens import REPLY_PRIMING_TOKENS, count_message, count_messages
from turnstream_tools.benchmarks.agent_llm import beside_offline
from turnstream_tools.benchmarks.agent_values import (
    TARGET_ALL,
    TARGET_OLD,
    Tally,
    anchor_count,
    anchors_and_tail,
    domain_of,
    kept_tally,
    names_any,
    needed_values,
    pinned_over,
)
from turnstream_tools.benchmarks.figures import Figure, Row, Target
from turnstream_tools.benchmarks.live import Live, encode
from turnstream_tools.samples.agent_traces import AgentTrace
from turnstream_tools.samples.conversations import turns_of

PROMPT_SMALL = 4000
"""The smaller prompt measured beside the defaults'."""
STREAM_SIDES = ("build_prompt", "anchors + tail")


def proportioned(settings: Settings, prompt: int) -> Settings:
    """`settings` for a worker and reader at a `prompt`-token prompt: its own topic prefix and metrics port, the
    context and memory block in the proportions `settings` gives them."""
    context = settings.budget_tokens * prompt // settings.prompt_budget_tokens
    block = settings.recall_budget_tokens * prompt // settings.prompt_budget_tokens
    return settings.model_copy(
        update={
            "topic_prefix": f"{settings.topic_prefix}-agents-{prompt}",
            "budget_tokens": context,
            "prompt_budget_tokens": prompt,
            "recall_budget_tokens": block,
            "metrics_port": free_port(),
        }
    )


def prompt_sizes(settings: Settings) -> tuple[int, ...]:
    """The prompt budgets measured: PROMPT_SMALL and the defaults' (`settings.prompt_budget_tokens`)."""
    return tuple(sorted({PROMPT_SMALL, settings.prompt_budget_tokens}))


def newest_user_text(history: Sequence[Message]) -> str:
    return next(content_text(m.get("content")) for m in reversed(history) if m.get("role") == "user")


def prompt_breaks(history: Sequence[Message], prompt: Sequence[Message], budget: int) -> list[str]:
    """The rules a prompt breaks: its anchors first and unchanged, its calls with their results, within budget."""
    broken = []
    pinned = anchor_count(history)
    if list(prompt[:pinned]) != list(history[:pinned]):
        broken.append("anchors")
    try:
        validate_messages(prompt)
    except MessageError:
        broken.append("tool pairs")
    if count_messages(list(prompt)) > budget:
        broken.append("budget")
    return broken


class StreamMeasure:
    """One side's tallies per domain, with the calls measured, clean and left out."""

    def __init__(self) -> None:
        self.points = 0
        self.clean = 0
        self.left_out = 0
        self.sides = {side: Tally() for side in STREAM_SIDES}
        self.broken: dict[str, int] = {}
        self.over_by = 0
        """The most tokens a prompt was over its budget (0: none was)."""
        self.over_at = ""
        """Where that prompt was read."""
        self.invented = 0
        """Prompts holding a reference the stand-in model invented (figure 15; 0 offline)."""

    def add(self, other: StreamMeasure) -> None:
        self.points += other.points
        self.clean += other.clean
        self.left_out += other.left_out
        self.invented += other.invented
        if other.over_by > self.over_by:
            self.over_by, self.over_at = other.over_by, other.over_at
        for side in STREAM_SIDES:
            self.sides[side].add(other.sides[side])
        for name, count in other.broken.items():
            self.broken[name] = self.broken.get(name, 0) + count

    def to_dict(self) -> dict[str, Any]:
        return {
            "points": self.points,
            "sides": {side: tally.to_dict() for side, tally in self.sides.items()},
            "invariants_clean": self.clean,
            "invariants_broken": self.broken,
            "pinned_over_budget": self.left_out,
            "most_over_budget": self.over_by,
            "most_over_budget_at": self.over_at,
            "prompts_with_invented_references": self.invented,
        }


async def replay_trace(
    live: Live,
    worker: Settings,
    client: ContextClient,
    trace: AgentTrace,
    invented: Callable[[], frozenset[str]] = frozenset,
) -> StreamMeasure:
    """Produce `trace` through `worker` a tool call at a time, reading build_prompt's prompt at each call once the
    history is over the prompt budget. `invented` gives the references a stand-in model has invented so far."""
    budget = worker.prompt_budget_tokens
    session = f"agents-{trace.id}"
    key = session_key(session, None)
    turns = turns_of(trace, session)
    language = detect_language(trace.messages)
    measured = StreamMeasure()
    sent = 0
    history_tokens = REPLY_PRIMING_TOKENS
    for index, message in enumerate(trace.messages):
        over = history_tokens > budget
        history_tokens += count_message(message)
        if not message.get("tool_calls") or not over:
            continue
        history = trace.messages[:index]
        question = newest_user_text(history)
        # the prompt ends in the user's message, whole: what is left of the budget must hold the anchors
        if pinned_over(history, budget - count_message({"role": "user", "content": question}), language):
            measured.left_out += 1
            continue
        await live.send(worker, encode(turns[sent:index]))
        sent = index
        applied = live.turn_applied(key, turns[index - 1]["turn_id"], worker)
        await live.until(applied, f"agents: {trace.id} applied up to {index}")
        prompt = await client.build_prompt(session, question, user_id=trace.user_id)
        needed = needed_values(trace.messages, index)
        for side, context in (
            ("build_prompt", prompt.messages),
            ("anchors + tail", anchors_and_tail(history, budget, language)),
        ):
            measured.sides[side].add(kept_tally(needed, context)[0])
        broken = prompt_breaks(history, prompt.messages, budget)
        over_by = count_messages(prompt.messages) - budget
        if over_by > measured.over_by:
            measured.over_by, measured.over_at = over_by, f"{trace.id} at message {index}"
        measured.points += 1
        measured.clean += not broken
        measured.invented += names_any(prompt.messages, invented())
        for name in broken:
            measured.broken[name] = measured.broken.get(name, 0) + 1
    return measured


async def stream_values(
    live: Live,
    workers: dict[int, Settings],
    traces: Sequence[AgentTrace],
    progress: Callable[[str], None],
    invented: Callable[[], frozenset[str]] = frozenset,
) -> dict[int, dict[str, StreamMeasure]]:
    """Per prompt budget, per domain and over all ("all"): every trace replayed through that budget's worker,
    the traces side by side."""
    out: dict[int, dict[str, StreamMeasure]] = {}
    for prompt, worker in workers.items():
        async with ContextClient.from_settings(worker) as client:
            replays = (replay_trace(live, worker, client, trace, invented) for trace in traces)
            measured = await asyncio.gather(*replays)
        by_domain = out[prompt] = {"all": StreamMeasure()}
        for trace, each in zip(traces, measured):
            by_domain.setdefault(domain_of(trace), StreamMeasure()).add(each)
            by_domain["all"].add(each)
        kept = by_domain["all"].sides["build_prompt"]
        progress(f"agents through the stream at {prompt:,}: {kept.old_kept_pct:.1f}% of old values kept")
    return out


def stream_figure(
    measured: dict[int, dict[str, StreamMeasure]],
    workers: dict[int, Settings],
    held_out: Mapping[int, Mapping[str, StreamMeasure]] | None = None,
    seeds: Sequence[int] = (),
) -> Figure:
    """Figure 14 from `stream_values`' measures; with `held_out`, the measures of `seeds`' traces (no rule was tuned on
    them) beside, which the target takes in too."""
    rows: list[Row] = []
    met = True
    for prompt, by_domain in measured.items():
        sides = [("", by_domain["all"])]
        if held_out is not None:
            sides.append((f", held-out seeds {', '.join(map(str, seeds))}", held_out[prompt]["all"]))
        for suffix, total in sides:
            ours, tail = total.sides["build_prompt"], total.sides["anchors + tail"]
            label = f"at a {prompt:,}-token prompt{suffix}"
            rows.append(Row.of(f"old values {label} vs anchors + tail", "% kept", ours.old_kept_pct, tail.old_kept_pct))
            rows.append(Row.of(f"all values {label} vs anchors + tail", "% kept", ours.kept_pct, tail.kept_pct))
            rows.append(Row.of(f"invariants {label}", "calls clean / calls", total.clean, total.points))
            met = (
                met
                and ours.old_kept_pct >= max(TARGET_OLD, tail.old_kept_pct)
                and ours.kept_pct >= max(TARGET_ALL, tail.kept_pct)
                and total.clean == total.points
            )
    data = {
        "budgets": {str(p): {domain: each.to_dict() for domain, each in by.items()} for p, by in measured.items()},
        "held_out": {
            "seeds": list(seeds),
            "budgets": {str(p): {d: each.to_dict() for d, each in by.items()} for p, by in (held_out or {}).items()},
        },
        "workers": {
            str(p): {"budget_tokens": w.budget_tokens, "recall_budget_tokens": w.recall_budget_tokens}
            for p, w in workers.items()
        },
    }
    return Figure(
        "agent_stream",
        "14 Agent values through build_prompt",
        "build_prompt",
        "anchors + tail",
        rows,
        Target(
            f"≥ {TARGET_OLD:.0f} % of old and ≥ {TARGET_ALL:.0f} % of all needed values, never below anchors + tail, "
            "held-out seeds included; invariants 100 %",
            met,
        ),
        data,
    )


MODEL_SIDES = ("build_prompt with the model", "build_prompt offline", "anchors + tail")


def _beside_offline(with_model: StreamMeasure, offline: StreamMeasure) -> dict[str, Any]:
    """`with_model`'s measure, its sides the model's, the offline worker's and the yardstick's."""
    both = with_model.to_dict()
    sides = (with_model.sides["build_prompt"], offline.sides["build_prompt"], offline.sides["anchors + tail"])
    both["sides"] = {side: tally.to_dict() for side, tally in zip(MODEL_SIDES, sides)}
    return both


def model_figure(
    with_model: Mapping[int, Mapping[str, StreamMeasure]],
    offline: Mapping[int, Mapping[str, StreamMeasure]],
    invented: int,
    answered: Mapping[str, int],
) -> Figure:
    """Figure 15: each budget's figure with the LLM path on (the stand-in model) against the offline worker's,
    from two `stream_values` of the same traces; and the prompts that hold one of the `invented` references the
    model made up. `answered`: the model's answers by kind."""
    rows: list[Row] = []
    met = True
    for prompt, by_domain in with_model.items():
        total, alone = by_domain["all"], offline[prompt]["all"]
        shown, held = beside_offline(
            f"at a {prompt:,}-token prompt",
            total.sides["build_prompt"],
            alone.sides["build_prompt"],
            total.clean,
            total.points,
        )
        rows += shown
        met = met and held
    holding = sum(by_domain["all"].invented for by_domain in with_model.values())
    rows.append(Row.of("prompts holding an invented reference", "prompts / references invented", holding, invented))
    met = met and holding == 0
    data = {
        "budgets": {
            str(p): {domain: _beside_offline(each, offline[p][domain]) for domain, each in by.items()}
            for p, by in with_model.items()
        },
        "model_answers": dict(answered),
        "references_invented": invented,
    }
    return Figure(
        "agent_stream_llm",
        "15 Agent values through build_prompt with the LLM path (a stand-in model)",
        "with the model",
        "offline",
        rows,
        Target("the offline figures held or raised; no invented reference in a prompt; invariants 100 %", met),
        data,
    )
