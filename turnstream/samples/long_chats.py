"""Generated long user↔assistant project chats, English and Chinese, for the read path's bench (pure, from a seed).

What project chats with an assistant look like: short user questions (now and then with an error line or a
setting pasted in), and answers of 2,000 to 10,000 characters (about 5,000 on average) made of sections, each a
heading and a paragraph over one body: a bullet list, a numbered multi-step plan with sub-steps, a checklist, a
markdown table (settings with their defaults, or options compared by latency and cost), code (Python,
TypeScript, Go, bash, SQL, YAML, JSON) or a stack trace (Python, Java, Go), with the odd relative date ("last
week", "昨天") in the prose. Chinese chats have Chinese prose, headings, tables and plans; code stays code.
The parts are in samples/long_chat_parts.py. Nothing ships but the code: a chat is the same for the same seed.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

from turnstream.samples.long_chat_parts import TOPICS, Topic, section, user_message
from turnstream.text.language import Language

START_TS = 1_685_613_600.0  # 1 June 2023, 10:00 UTC
DAY = 86_400.0
MESSAGES_PER_DAY = 20
MIN_ANSWER_CHARS = 2_000
MAX_ANSWER_CHARS = 10_000
MODE_ANSWER_CHARS = 3_000
"""Most answers are near this long; a few run to the maximum (a mean of about 5,000)."""


@dataclass(frozen=True)
class LongChat:
    """One session's turns, in the shape the worker takes them, and questions to ask once all are applied."""

    session_id: str
    user_id: str
    language: Language
    turns: list[dict[str, Any]]
    questions: list[str]


def answer(rng: random.Random, language: Language, topic: Topic) -> str:
    """An assistant answer of MIN_ANSWER_CHARS to MAX_ANSWER_CHARS characters, whole sections only."""
    target = int(rng.triangular(MIN_ANSWER_CHARS, MAX_ANSWER_CHARS, MODE_ANSWER_CHARS))
    sections: list[str] = []
    while len("\n\n".join(sections)) < target:
        sections.append(section(rng, language, topic))
    while len("\n\n".join(sections)) > MAX_ANSWER_CHARS:  # a section is far shorter than the bounds' gap
        sections.pop()
    return "\n\n".join(sections)


def long_chat(language: Language, messages: int = 120, seed: int = 0) -> LongChat:
    """One chat of `messages` messages (user and assistant in turn), MESSAGES_PER_DAY a day."""
    rng = random.Random(f"long-{language}-{seed}")
    session_id, user_id = f"long-{language}-{seed}", f"long-{language}-user"
    turns: list[dict[str, Any]] = []
    topic = rng.choice(TOPICS)
    for seq in range(messages):
        ts = START_TS + (seq // MESSAGES_PER_DAY) * DAY + (seq % MESSAGES_PER_DAY) * 300
        if seq % 2 == 0:
            topic = rng.choice(TOPICS) if rng.random() < 0.4 else topic
            message = {"role": "user", "content": user_message(rng, language, topic)}
        else:
            message = {"role": "assistant", "content": answer(rng, language, topic)}
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
    questions = [user_message(rng, language, topic) for topic in rng.sample(TOPICS, 8)]
    return LongChat(session_id, user_id, language, turns, questions)


def long_chats(chats: int = 4, messages: int = 120, seed: int = 0) -> list[LongChat]:
    """`chats` chats per language, English first."""
    languages: tuple[Language, ...] = ("en", "zh")
    return [long_chat(language, messages, seed + n) for language in languages for n in range(chats)]
