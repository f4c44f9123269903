"""Generated long user↔assistant project chats, English and Chinese, for the read path's bench (pure, from a seed).

What project chats with an assistant look like: short user questions (now and then with an error line or a
config snippet pasted in), and answers of 2,000 to 10,000 characters (about 4,700 on average) shaped by the ask:
a debugging answer opens on a stack trace (Python, Java, Go or Node) and goes on to the fix and a test, a how-to
on code and config, a rollout on a checklist and a plan, a tuning question on tables. An answer is an opening
line and sections, each a heading and a short paragraph over one body: code in seven languages (Python,
TypeScript, Go, bash, SQL, YAML, JSON) made of the topic's own identifiers, settings and error, a markdown table
(settings with defaults and ranges, options by latency and cost, error rates before and after, environments), a
numbered multi-step plan with sub-steps, a checklist or a bullet list; no sentence or code block twice in one
answer, and the odd relative date ("last week", "昨天") in the prose. Chinese chats have Chinese prose,
headings, tables and plans (and code comments); code and traces stay code. Each chat's questions ask about
topics it discussed. The parts are in samples/long_chat_parts.py. Nothing ships but the code: a chat is the
same for the same seed.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

from turnstream.text.language import Language
from turnstream_tools.samples.long_chat_parts import TOPICS, Topic, ask, closing, draft, opening, section, section_kinds

START_TS = 1_685_613_600.0  # 1 June 2023, 10:00 UTC
DAY = 86_400.0
MESSAGES_PER_DAY = 20
MIN_ANSWER_CHARS = 2_000
MAX_ANSWER_CHARS = 10_000
SPREAD_CHARS = 2_500
"""How far past the minimum an answer runs, on average: most are short, a few run to the maximum."""
QUESTIONS = 8
"""Questions per chat."""


@dataclass(frozen=True)
class LongChat:
    """One session's turns, in the shape the worker takes them, and questions to ask once all are applied."""

    session_id: str
    user_id: str
    language: Language
    turns: list[dict[str, Any]]
    questions: list[str]


def answer(rng: random.Random, language: Language, topic: Topic, shape: str) -> str:
    """An assistant answer of MIN_ANSWER_CHARS to MAX_ANSWER_CHARS characters to an ask of `shape`, whole
    sections only."""
    target = min(MAX_ANSWER_CHARS, MIN_ANSWER_CHARS + int(rng.expovariate(1 / SPREAD_CHARS)))
    d = draft(rng, language, topic)
    parts = [opening(d, shape)] if rng.random() < 0.7 else []
    for number, kind in enumerate(section_kinds(d, shape)):  # ends early rather than say a thing twice
        if len("\n\n".join(parts)) >= target:
            break
        # the first section always has a heading; a later one now and then runs on from the one before
        parts.append(section(d, kind, heading=number == 0 or rng.random() < 0.85))
    while len("\n\n".join(parts)) > MAX_ANSWER_CHARS:  # a section is far shorter than the bounds' gap
        parts.pop()
    if rng.random() < 0.3:
        ending = closing(d)
        if len("\n\n".join([*parts, ending])) <= MAX_ANSWER_CHARS:
            parts.append(ending)
    return "\n\n".join(parts)


def long_chat(language: Language, messages: int = 120, seed: int = 0) -> LongChat:
    """One chat of `messages` messages (user and assistant in turn), MESSAGES_PER_DAY a day."""
    rng = random.Random(f"long-{language}-{seed}")
    session_id, user_id = f"long-{language}-{seed}", f"long-{language}-user"
    turns: list[dict[str, Any]] = []
    topic, shape = rng.choice(TOPICS), "howto"
    answered: list[Topic] = []  # the topics the chat has answered on, in order, for its questions
    for seq in range(messages):
        ts = START_TS + (seq // MESSAGES_PER_DAY) * DAY + (seq % MESSAGES_PER_DAY) * 300
        if seq % 2 == 0:
            topic = rng.choice(TOPICS) if rng.random() < 0.4 else topic
            text, shape = ask(rng, language, topic)
            message = {"role": "user", "content": text}
        else:
            message = {"role": "assistant", "content": answer(rng, language, topic, shape)}
            answered += [] if topic in answered else [topic]
        turns.append(
            {
                "turn_id": f"{session_id}-{seq}",
                "session_id": session_id,
                "user_id": user_id,
                "seq": seq,
                "ts": ts,
                "message": message,
            }
        )
    # Asked against the archive once every turn is in: each about a topic an earlier answer covered.
    pool = answered or [topic]
    asked = rng.sample(pool, QUESTIONS) if len(pool) >= QUESTIONS else [rng.choice(pool) for _ in range(QUESTIONS)]
    questions = [ask(rng, language, about, question=True)[0] for about in asked]
    return LongChat(session_id, user_id, language, turns, questions)


def long_chats(chats: int = 4, messages: int = 120, seed: int = 0) -> list[LongChat]:
    """`chats` chats per language, English first."""
    languages: tuple[Language, ...] = ("en", "zh")
    return [long_chat(language, messages, seed + n) for language in languages for n in range(chats)]
