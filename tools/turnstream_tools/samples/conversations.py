"""The hand-written sample conversations the demo replays, a generator of varied ones for scaled-up runs, and their Turns.

A sample file holds a header (id, title, language, user_id, planted_facts, variants) and OpenAI chat messages. Each
variant axis is a list of rows of aligned spellings: row 0 is how the sample spells them, another row replaces them all
at once (a name and its short form, an order number and its typo, ...).
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from importlib import resources
from typing import Any, Protocol

import orjson

from turnstream.compaction import validate_messages
from turnstream.text.chat import Message, call_ids, content_text
from turnstream.text.language import Language
from turnstream_tools.samples.planted import PlantedFact

Variants = tuple[tuple[tuple[str, ...], ...], ...]
_TS0 = 1_700_000_000.0
_INSERT_RATE = 0.35


@dataclass(frozen=True)
class Sample:
    """One conversation and the facts planted early in it; a fact's `slot` holds its type (fact, preference, ...)."""

    id: str
    title: str
    language: Language
    user_id: str
    planted_facts: tuple[PlantedFact, ...]
    messages: list[Message]
    variants: Variants = ()


def _sample(doc: dict[str, Any]) -> Sample:
    facts = tuple(PlantedFact(f["type"], f["text"], tuple(f["probe"])) for f in doc["planted_facts"])
    variants = tuple(tuple(tuple(row) for row in axis) for axis in doc.get("variants", ()))
    sample = Sample(doc["id"], doc["title"], doc["language"], doc["user_id"], facts, doc["messages"], variants)
    validate_messages(sample.messages)
    return sample


def load_samples() -> list[Sample]:
    """The hand-written samples shipped in tools/turnstream_tools/samples/data, sorted by id."""
    files = sorted(
        (p for p in resources.files("turnstream_tools.samples").joinpath("data").iterdir() if p.name.endswith(".json")),
        key=lambda p: p.name,
    )
    return [_sample(orjson.loads(p.read_bytes())) for p in files]


def stating_index(fact: PlantedFact, messages: Sequence[Message]) -> int | None:
    """Index of the first message whose text holds every probe of `fact`, or None."""
    for index, message in enumerate(messages):
        text = content_text(message.get("content"))
        if all(probe in text for probe in fact.probes):
            return index
    return None


def _vary(sample: Sample, rng: random.Random) -> Sample:
    """The sample with one row of each variant axis swapped in, in messages and facts alike."""
    mapping: dict[str, str] = {}
    for axis in sample.variants:
        mapping.update(zip(axis[0], rng.choice(axis)))
    if not mapping:
        return sample
    pattern = re.compile("|".join(re.escape(k) for k in sorted(mapping, key=len, reverse=True)))
    doc = {"messages": sample.messages, "facts": [[f.slot, f.statement, f.probes] for f in sample.planted_facts]}
    varied = orjson.loads(pattern.sub(lambda m: mapping[m.group()], orjson.dumps(doc).decode()))
    facts = tuple(PlantedFact(slot, text, tuple(probes)) for slot, text, probes in varied["facts"])
    return replace(sample, planted_facts=facts, messages=varied["messages"])


def _opens_step(messages: Sequence[Message], index: int) -> bool:
    """Whether a step starts here: a user message, a thought right before a tool call, or a call with no thought."""
    message = messages[index]
    if message["role"] == "user":
        return True
    if message["role"] != "assistant":
        return False
    if call_ids(message):
        before = messages[index - 1] if index else {}
        return not (before.get("role") == "assistant" and not call_ids(before))
    return index + 1 < len(messages) and bool(call_ids(messages[index + 1]))


def steps(messages: Sequence[Message]) -> list[list[Message]]:
    """The conversation cut into steps that never split a call from its results: leading system messages, then each
    user message or ReAct step (optional thought, call, results) with the plain assistant replies that follow it."""
    cut: list[list[Message]] = []
    for index, message in enumerate(messages):
        if not cut or _opens_step(messages, index):
            cut.append([])
        cut[-1].append(message)
    return cut


def _copy_step(step: list[Message], copy: int) -> list[Message]:
    """`step` with its tool call ids made unique by a copy number."""
    out: list[Message] = []
    for message in step:
        if call_ids(message):
            calls = [{**c, "id": f"{c['id']}_{copy}"} for c in message["tool_calls"]]
            message = {**message, "tool_calls": calls}
        elif message["role"] == "tool":
            message = {**message, "tool_call_id": f"{message['tool_call_id']}_{copy}"}
        out.append(message)
    return out


def _session(base: Sample, index: int, turns: int, seed: int) -> Sample:
    rng = random.Random(f"{seed}/{index}")
    sample = _vary(base, rng)
    cut = steps(sample.messages)
    last_fact = (
        max((stating_index(f, sample.messages) or 0) for f in sample.planted_facts) if sample.planted_facts else 0
    )
    # the head keeps every step up to the last fact statement (at least system + first user message) in place
    head_steps, size = 0, 0
    while head_steps < len(cut) and (size <= last_fact or head_steps < 2):
        size += len(cut[head_steps])
        head_steps += 1
    head, rest = cut[:head_steps], cut[head_steps:]
    pool = rest or cut[1:]
    messages = [m for step in head for m in step]
    copies = 0

    def insert() -> None:
        nonlocal copies
        copies += 1
        messages.extend(_copy_step(rng.choice(pool), copies))

    for step in rest:
        if len(messages) >= turns:
            break
        if rng.random() < _INSERT_RATE:
            insert()
        messages.extend(step)
    while len(messages) < turns:
        insert()
    del messages[turns:]
    validate_messages(messages)
    facts = tuple(f for f in sample.planted_facts if stating_index(f, messages) is not None)
    return replace(
        sample,
        id=f"{base.id}-{seed}-{index}",
        user_id=f"{base.user_id}-{seed}-{index}",
        planted_facts=facts,
        messages=messages,
        variants=(),
    )


def generate_conversations(sessions: int, turns: int, seed: int = 0) -> list[Sample]:
    """`sessions` conversations of exactly `turns` messages each, session i built from sample i mod 3 with varied names
    and numbers and extra copies of its steps (ReAct steps, chit-chat); deterministic for a seed. A conversation cut
    short may end in a tool call still waiting for some results; facts stated after the cut are left out."""
    if sessions < 0 or turns < 1:
        raise ValueError(f"need sessions >= 0 and turns >= 1, got {sessions} and {turns}")
    samples = load_samples()
    return [_session(samples[i % len(samples)], i, turns, seed) for i in range(sessions)]


class Replayable(Protocol):
    """A conversation with its owner: a Sample, or an agent trace."""

    @property
    def user_id(self) -> str: ...

    @property
    def messages(self) -> list[Message]: ...


def turns_of(sample: Replayable, session_id: str, tenant: str | None = None) -> list[dict[str, Any]]:
    """The Turn values (as dicts) that replay `sample` as session `session_id`, one per message, a second apart."""
    return [
        {
            "turn_id": f"{session_id}-{seq}",
            "session_id": session_id,
            "tenant": tenant,
            "user_id": sample.user_id,
            "seq": seq,
            "ts": _TS0 + seq,
            "message": message,
            "meta": {},
        }
        for seq, message in enumerate(sample.messages)
    ]
