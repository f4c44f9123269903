"""A generated long, multi-session chat per language with details planted early and asked about at the end.

It ships with the package so the recall figure exists without any download: 20 dated sessions of
small talk with distractors that share the details' words, one detail stated once in an early
session, and a question per detail whose answer is the detail's own words.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

from turnstream.text.language import Language

START_TS = 1_682_935_200.0  # 1 May 2023, 10:00 UTC
DAY = 86_400.0


@dataclass(frozen=True)
class RecallCase:
    """One conversation to produce turn by turn, and the questions asked once all of it is applied."""

    session_id: str
    user_id: str
    turns: list[dict[str, Any]]
    questions: list[tuple[str, str]]
    """(question, gold answer)."""
    evidence: list[tuple[str, ...]] = field(default_factory=list)
    """Per question, the turn ids that hold its answer (empty where none is known)."""


DETAILS: dict[Language, list[tuple[str, str, str]]] = {
    # (the detail as said, the question, its gold answer)
    "en": [
        ("By the way, my sister's cat is called Pistachio.", "What is my sister's cat called?", "Pistachio"),
        (
            "I signed up for pottery classes at the Clay Loft on Tuesdays.",
            "Where do I take pottery classes?",
            "Clay Loft",
        ),
        (
            "We booked our anniversary dinner at Osteria Nonna.",
            "Which restaurant did we book for the anniversary dinner?",
            "Osteria Nonna",
        ),
        ("My landlord is raising the rent to 1450 dollars.", "How much will my rent be?", "1450"),
        ("I'm reading a novel called The Salt Road.", "Which novel am I reading?", "Salt Road"),
        ("My new manager is called Priya.", "What is my manager's name?", "Priya"),
        ("We adopted a rescue greyhound named Biscuit.", "What is our rescue greyhound called?", "Biscuit"),
        ("My flight to Oslo leaves from gate B14.", "Which gate does my Oslo flight leave from?", "B14"),
        ("I found out I'm allergic to sesame.", "What did I find out I am allergic to?", "sesame"),
        ("My brother moved to Valparaiso for his job.", "Where did my brother move for his job?", "Valparaiso"),
    ],
    "zh": [
        ("对了，我妹妹的猫叫开心果。", "我妹妹的猫叫什么？", "开心果"),
        ("我报了陶艺课，在泥巴工坊，每周二上课。", "我在哪里上陶艺课？", "泥巴工坊"),
        ("我们的结婚纪念日晚餐订在了山城小馆。", "我们的纪念日晚餐订在哪家餐厅？", "山城小馆"),
        ("房东说房租要涨到四千五百元。", "我的房租要涨到多少？", "四千五百元"),
        ("我最近在读一本小说叫《盐之路》。", "我最近在读哪本小说？", "盐之路"),
        ("我的新领导叫王晓琳。", "我的新领导叫什么名字？", "王晓琳"),
        ("我们领养了一只灵缇犬，名字叫饼干。", "我们领养的灵缇犬叫什么？", "饼干"),
        ("我去奥斯陆的航班在B14登机口。", "我去奥斯陆的航班在哪个登机口？", "B14"),
        ("医生说我对芝麻过敏。", "医生说我对什么过敏？", "芝麻"),
        ("我哥哥因为工作搬到了成都。", "我哥哥因为工作搬到了哪里？", "成都"),
    ],
}

_FILLER: dict[Language, tuple[list[str], list[str], list[str]]] = {
    "en": (
        [
            "work",
            "the weather",
            "my neighbour's cat",
            "dinner with friends",
            "the gym",
            "a podcast",
            "the garden",
            "my commute",
            "a movie",
            "the new cafe",
            "rent prices",
            "a book club",
            "my manager's meeting",
            "the flight home",
        ],
        [
            "Today {t} was {a}.",
            "I keep thinking about {t}, it was {a}.",
            "Honestly {t} felt {a} this week.",
            "Not much new, {t} was {a} again.",
            "Quick update: {t} turned out {a}.",
        ],
        ["That sounds {a}! Tell me more.", "Oh, {a} indeed. How did it go?", "Interesting, {a} is a good word for it."],
    ),
    "zh": (
        [
            "工作",
            "天气",
            "邻居家的猫",
            "和朋友吃晚饭",
            "健身房",
            "一个播客",
            "花园",
            "通勤",
            "一部电影",
            "新开的咖啡馆",
            "房租",
            "读书会",
            "领导开的会",
            "回家的航班",
        ],
        ["今天{t}挺{a}的。", "我一直在想{t}，真的很{a}。", "这周{t}感觉有点{a}。", "没什么新鲜事，{t}还是很{a}。"],
        ["听起来很{a}！多说说。", "确实挺{a}的，后来呢？", "有意思，用{a}来形容很贴切。"],
    ),
}
_ADJECTIVES: dict[Language, list[str]] = {
    "en": ["busy", "calm", "strange", "lovely", "tiring", "funny", "chaotic", "relaxing"],
    "zh": ["忙", "平静", "奇怪", "美好", "累", "好笑", "混乱", "放松"],
}
_NAMES: dict[Language, tuple[str, str]] = {"en": ("Maya", "Sol"), "zh": ("Lin", "Xiaoyu")}


def recall_case(language: Language, sessions: int = 20, turns_per_session: int = 30, seed: int = 7) -> RecallCase:
    """One long chat in `language`: each detail is stated once, in the first half of the sessions."""
    rng = random.Random(f"{language}-{seed}")
    topics, user_lines, assistant_lines = _FILLER[language]
    adjectives = _ADJECTIVES[language]
    user, assistant = _NAMES[language]
    details = DETAILS[language]
    planted = {
        (s, rng.randrange(turns_per_session // 2)): d
        for s, d in zip(rng.sample(range(sessions // 2), len(details)), details)
    }
    session_id, user_id = f"recall-{language}", f"recall-{language}-user"
    messages: list[tuple[dict[str, Any], float]] = []
    for session in range(sessions):
        start = START_TS + session * 7 * DAY
        for n in range(turns_per_session // 2):
            detail = planted.get((session, n))
            said = (
                detail[0] if detail else rng.choice(user_lines).format(t=rng.choice(topics), a=rng.choice(adjectives))
            )
            reply = rng.choice(assistant_lines).format(a=rng.choice(adjectives))
            messages.append(({"role": "user", "name": user, "content": said}, start + n * 120))
            messages.append(({"role": "assistant", "name": assistant, "content": reply}, start + n * 120 + 60))
    turns: list[dict[str, Any]] = [
        {"turn_id": f"{session_id}-{i}", "session_id": session_id, "user_id": user_id, "seq": i, "ts": ts, "message": m}
        for i, (m, ts) in enumerate(messages)
    ]
    planted_ids = {m["content"]: t["turn_id"] for t in turns for m in [t["message"]]}
    return RecallCase(
        session_id,
        user_id,
        turns,
        [(question, answer) for _, question, answer in details],
        [(planted_ids[said],) for said, _, _ in details],
    )
