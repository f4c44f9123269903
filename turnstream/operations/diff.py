"""`turnstream diff NAME`: the live prefix's prompts against a shadow's, on the same Redis, for the same sessions and
questions.

A shadow named NAME writes every key under prefix NAME as a worker with TURNSTREAM_TOPIC_PREFIX=NAME would, from the
live prefix's turns; so the two sides are two key prefixes of one Redis. Each question is asked of both through the
prompt read a gateway runs (GatewayMemory.build_prompt, with provenance, recording nothing against any dedup window).

The questions are the users' own turns, read from the log (the live prefix's turns topic, one pass over the
partitions that hold the sessions), not from the live side's archive: the log is what both sides were built from, so
the question does not depend on the side under test, and it holds every turn, where the archive keeps a bounded,
evictable and erasable part of it.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from turnstream.client.context import GatewayMemory
from turnstream.client.reads import gateway_semantic
from turnstream.errors import TurnstreamError
from turnstream.kafka.session_log import read_sessions_records
from turnstream.operations.diff_report import Answered, Question, QuestionDiff, SessionDiff, last_user_turns
from turnstream.operations.prompt_diff import diff_prompts, prompt_side
from turnstream.prompt.assemble import Prompt
from turnstream.redis.connect import redis_client
from turnstream.redis.inspection import InspectReader
from turnstream.schemas.context import ContextDoc
from turnstream.settings import Settings
from turnstream.text.chat import Message

SAMPLE_SEED = 50
"""The seed of the session sample: the same sessions on every run over the same keyspace."""

Holds = Callable[[str, Sequence[Message]], bool]
"""Whether a prompt's messages hold a gold answer (the recall bench's scoring)."""


class DiffRefused(TurnstreamError, ValueError):
    """The shadow named is the live prefix, or holds no contexts on this Redis."""


@dataclass(frozen=True)
class DiffPlan:
    """What to compare."""

    sessions: int | None
    """How many sessions to sample; None: all of them."""
    named: tuple[str, ...] = ()
    """Session keys to compare, beside the sample."""
    questions: int = 1
    """The last N user turns of each session."""
    labelled: Mapping[str, list[Question]] | None = None
    """Session key -> labelled questions: these sessions and questions, instead of a sample and its user turns."""


def sample(keys: Sequence[str], count: int | None, seed: int = SAMPLE_SEED) -> list[str]:
    """`count` of `keys` (all with None), chosen by `seed` alone, in key order."""
    ordered = sorted(keys)
    if count is None or count >= len(ordered):
        return ordered
    return sorted(random.Random(seed).sample(ordered, count))


class Side:
    """One prefix of the Redis: its contexts, and the prompt read a gateway runs over them."""

    def __init__(self, settings: Settings) -> None:
        self.inspect = InspectReader(redis_client(settings), settings)
        self.memory = GatewayMemory(self.inspect.redis, settings, gateway_semantic(settings))

    async def prompt(self, key: str, question: str) -> tuple[Prompt, ContextDoc | None]:
        """The prompt for `question` in session `key`, with its provenance, and the context it was built from."""
        owner = await self.inspect.contexts.owner_of(key)
        doc = await self.inspect.contexts.read(key, owner)
        prompt = await self.memory.build_prompt(key, owner, question, record=False, provenance=True)
        return prompt, doc

    async def aclose(self) -> None:
        await self.inspect.redis.aclose()


def check_names(live: str, shadow: str) -> None:
    """DiffRefused when the shadow named is the live prefix itself."""
    if shadow == live:
        raise DiffRefused(f"{shadow!r} is the live prefix (TURNSTREAM_TOPIC_PREFIX): name a shadow to compare it with")


async def compare(
    live_settings: Settings, shadow_settings: Settings, plan: DiffPlan, holds: Holds | None = None
) -> list[SessionDiff]:
    """Per session of the plan, each question's prompt on the live prefix against the shadow's; `holds` scores the
    labelled questions' answers."""
    check_names(live_settings.topic_prefix, shadow_settings.topic_prefix)
    live, shadow = Side(live_settings), Side(shadow_settings)
    try:
        shadowed = set(await shadow.inspect.session_keys())
        if not shadowed:
            raise DiffRefused(
                f"no contexts under prefix {shadow_settings.topic_prefix!r} on this Redis: is a shadow of that name running?"
            )
        questions = await _questions(live_settings, live, plan)
        found: list[SessionDiff] = []
        for key, asked in questions.items():
            diffs = [await _question_diff(live, shadow, key, q, holds, shadow_settings.topic_prefix) for q in asked]
            found.append(SessionDiff(key, key in shadowed, diffs))
        return found
    finally:
        await live.aclose()
        await shadow.aclose()


async def _questions(settings: Settings, live: Side, plan: DiffPlan) -> dict[str, list[Question]]:
    """Session key -> its questions: the labelled ones, or the last user turns of the sampled and named sessions."""
    if plan.labelled is not None:
        return {key: list(asked) for key, asked in sorted(plan.labelled.items())}
    keys = sorted({*sample(await live.inspect.session_keys(), plan.sessions), *plan.named})
    records = await read_sessions_records(settings, keys, settings.turns_topic)
    return {key: last_user_turns(records[key], key, plan.questions, settings.max_content_bytes) for key in keys}


async def _question_diff(
    live: Side, shadow: Side, key: str, question: Question, holds: Holds | None, shadow_name: str
) -> QuestionDiff:
    live_prompt, live_doc = await live.prompt(key, question.text)
    shadow_prompt, shadow_doc = await shadow.prompt(key, question.text)
    diff = diff_prompts(
        prompt_side(live_prompt, live_doc), prompt_side(shadow_prompt, shadow_doc), ("live", shadow_name)
    )
    answered = None
    if holds is not None and question.answer is not None:
        answered = Answered(
            holds(question.answer, live_prompt.messages), holds(question.answer, shadow_prompt.messages)
        )
    return QuestionDiff(question, diff, answered)
