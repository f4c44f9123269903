"""Generated long user↔assistant chats, English and Chinese, for the read path's bench (pure, from a seed).

What project chats with an assistant look like: short user messages, and answers of 1,000 to 5,000
characters made of headings, paragraphs, bullet and numbered lists and fenced code blocks, with the
odd relative date ("last week", "昨天") in both. Nothing ships but this module: a chat is the same
for the same seed.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

from turnstream.text.language import Language

START_TS = 1_685_613_600.0  # 1 June 2023, 10:00 UTC
DAY = 86_400.0
MESSAGES_PER_DAY = 20
MIN_ANSWER_CHARS = 1_000
MAX_ANSWER_CHARS = 5_000


@dataclass(frozen=True)
class LongChat:
    """One session's turns, in the shape the worker takes them, and questions to ask once all are applied."""

    session_id: str
    user_id: str
    language: Language
    turns: list[dict[str, Any]]
    questions: list[str]


_TOPICS: dict[Language, list[str]] = {
    "en": [
        "retry backoff",
        "upload queue",
        "schema migration",
        "cache invalidation",
        "rate limiter",
        "auth tokens",
        "search index",
        "billing export",
        "image resizer",
        "webhook signer",
        "feature flags",
        "log shipping",
    ],
    "zh": [
        "重试退避",
        "上传队列",
        "数据库迁移",
        "缓存失效",
        "限流器",
        "登录令牌",
        "搜索索引",
        "账单导出",
        "图片压缩",
        "回调签名",
        "功能开关",
        "日志收集",
    ],
}
_THINGS = ["timeout", "batch_size", "max_retries", "ttl_seconds", "workers", "window_ms", "chunk_bytes", "region"]
_USER: dict[Language, list[str]] = {
    "en": [
        "How should I set up the {topic}?",
        "Yesterday the {topic} broke again, any idea why?",
        "Can you show me the {topic} with {thing}?",
        "Next week we ship the {topic}. What should I check?",
        "Thanks. And what about {thing} for the {topic}?",
        "This morning I tried your {topic} code, it fails on {thing}.",
    ],
    "zh": [
        "{topic}应该怎么配置？",
        "昨天{topic}又出问题了，知道为什么吗？",
        "能给我看一下带{thing}的{topic}吗？",
        "下周要上线{topic}，需要检查什么？",
        "谢谢。那{topic}的{thing}呢？",
        "今天试了你的{topic}代码，{thing}报错了。",
    ],
}
_PROSE: dict[Language, list[str]] = {
    "en": [
        "The {topic} should read {thing} from the settings object rather than a constant, so a deploy can change it.",
        "As we discussed last week, keep the {topic} idempotent: a retried call must not apply twice.",
        "A value of {n} for {thing} is a sane default; measure before you raise it.",
        "If it failed yesterday, look at the {thing} first: most {topic} incidents start there.",
        "This keeps the hot path small and moves the slow part of the {topic} behind a queue.",
        "Log the {thing} with every error, or the {topic} failures will be impossible to tell apart.",
    ],
    "zh": [
        "{topic}应该从配置对象读取{thing}，而不是写死常量，这样部署时可以调整。",
        "就像上周说的，{topic}要保持幂等：重试的调用不能生效两次。",
        "{thing}设为{n}是合理的默认值，调大之前先测一下。",
        "如果昨天失败了，先看{thing}：大多数{topic}的事故都从这里开始。",
        "这样热路径保持精简，把{topic}里慢的部分放到队列后面。",
        "每次出错都记录{thing}，否则{topic}的各种失败根本分不清。",
    ],
}
_HEADINGS: dict[Language, list[str]] = {
    "en": ["## Setting up the {topic}", "### Why {thing} matters", "## Checklist", "### What to test", "## Example"],
    "zh": ["## 配置{topic}", "### 为什么{thing}很重要", "## 检查清单", "### 需要测试什么", "## 示例"],
}
_CODE = [
    (
        "python",
        'def {name}(client, {thing}={n}):\n    """{topic}"""\n    for attempt in range({thing}):\n'
        "        try:\n            return client.send(timeout={n})\n        except TimeoutError:\n"
        '            time.sleep(2 ** attempt)\n    raise RuntimeError("{name} gave up")\n',
    ),
    (
        "bash",
        "export {upper}={n}\nkubectl rollout restart deploy/{name}\nkubectl logs -l app={name} --since=1h | grep -i error\n",
    ),
    (
        "sql",
        "ALTER TABLE {name} ADD COLUMN {thing} integer NOT NULL DEFAULT {n};\n"
        "CREATE INDEX CONCURRENTLY {name}_{thing}_idx ON {name} ({thing});\n",
    ),
    ("yaml", "{name}:\n  {thing}: {n}\n  enabled: true\n  regions:\n    - eu-west-1\n    - us-east-1\n"),
]


def _fill(template: str, rng: random.Random, topic: str) -> str:
    thing = rng.choice(_THINGS)
    name = thing.split("_")[0] + "_" + rng.choice(["worker", "job", "client", "service"])
    return template.format(
        topic=topic, thing=thing, n=rng.choice([3, 5, 10, 30, 64, 250, 1000]), name=name, upper=thing.upper()
    )


def _section(rng: random.Random, language: Language, topic: str) -> str:
    """A heading with prose, a list or a code block under it."""
    heading = _fill(rng.choice(_HEADINGS[language]), rng, topic)
    prose = " ".join(_fill(rng.choice(_PROSE[language]), rng, topic) for _ in range(rng.randint(2, 5)))
    kind = rng.randrange(3)
    if kind == 0:
        items = "\n".join(f"- {_fill(rng.choice(_PROSE[language]), rng, topic)}" for _ in range(rng.randint(3, 6)))
    elif kind == 1:
        items = "\n".join(
            f"{n}. {_fill(rng.choice(_PROSE[language]), rng, topic)}" for n in range(1, rng.randint(3, 6))
        )
    else:
        lang, template = rng.choice(_CODE)
        items = f"```{lang}\n{_fill(template, rng, topic)}```"
    return f"{heading}\n\n{prose}\n\n{items}"


def answer(rng: random.Random, language: Language, topic: str) -> str:
    """An assistant answer of MIN_ANSWER_CHARS to MAX_ANSWER_CHARS characters, whole sections only."""
    target = rng.randint(MIN_ANSWER_CHARS, MAX_ANSWER_CHARS)
    sections: list[str] = []
    while len("\n\n".join(sections)) < target:
        sections.append(_section(rng, language, topic))
    if len("\n\n".join(sections)) > MAX_ANSWER_CHARS:  # a section is far shorter than the bounds' gap
        sections.pop()
    return "\n\n".join(sections)


def long_chat(language: Language, messages: int = 120, seed: int = 0) -> LongChat:
    """One chat of `messages` messages (user and assistant in turn), MESSAGES_PER_DAY a day."""
    rng = random.Random(f"long-{language}-{seed}")
    session_id, user_id = f"long-{language}-{seed}", f"long-{language}-user"
    topics = _TOPICS[language]
    turns: list[dict[str, Any]] = []
    topic = rng.choice(topics)
    for seq in range(messages):
        ts = START_TS + (seq // MESSAGES_PER_DAY) * DAY + (seq % MESSAGES_PER_DAY) * 300
        if seq % 2 == 0:
            topic = rng.choice(topics) if rng.random() < 0.4 else topic
            message = {"role": "user", "content": _fill(rng.choice(_USER[language]), rng, topic)}
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
    questions = [_fill(rng.choice(_USER[language]), rng, topic) for topic in rng.sample(topics, 8)]
    return LongChat(session_id, user_id, language, turns, questions)


def long_chats(chats: int = 4, messages: int = 120, seed: int = 0) -> list[LongChat]:
    """`chats` chats per language, English first."""
    languages: tuple[Language, ...] = ("en", "zh")
    return [long_chat(language, messages, seed + n) for language in languages for n in range(chats)]
