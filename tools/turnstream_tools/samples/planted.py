"""Long synthetic conversations (EN or ZH) with facts planted early, and a retention score.

Each planted fact comes from one of several phrasings per slot, with random values; the filler
is a travel-planning ReAct session (tool calls with JSON results, failures, chit-chat). A fact
counts as retained when one line of the retained text holds all of its probes (its values).
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from turnstream.compaction.strategies.base import Digest, Strategy
from turnstream.text.chat import Message
from turnstream.text.language import Language
from turnstream.text.tokens import count_messages


@dataclass(frozen=True, slots=True)
class PlantedFact:
    """A fact stated in the conversation and the values that prove it survived."""

    slot: str
    statement: str
    probes: tuple[str, ...]
    stale: tuple[str, ...] = ()
    """Values a later correction made wrong."""


@dataclass(frozen=True, slots=True)
class PlantedConversation:
    messages: list[Message]
    facts: tuple[PlantedFact, ...]
    lang: Language


# slot -> (phrasings, values); "{v}" is the value, "{o}" another value of the slot. Probes are the value and,
# after "|", a word that must sit next to a value too common to prove anything alone (a small number).
_EN: dict[str, tuple[list[str], list[str]]] = {
    "name": (
        [
            "My name is {v}.",
            "Oh and I'm {v}, by the way.",
            "You can call me {v}.",
            "Please address me as {v} in the emails.",
        ],
        ["Dana Whitfield", "Marek Novak", "Priya Raman", "Tomas Lindqvist", "Aiko Mori"],
    ),
    "home city": (
        ["I live in {v}.", "I'm based in {v} these days.", "We moved to {v} two years ago.", "Home for me is {v}."],
        ["Rotterdam", "Porto", "Ljubljana", "Tallinn", "Valencia"],
    ),
    "budget": (
        [
            "My budget is {v} euros for everything.",
            "I can spend at most {v} EUR on this trip.",
            "Keep the total under {v} euros, please.",
            "Budget-wise we're looking at {v} euros max.",
        ],
        ["2350", "4700", "3150", "5250", "1875"],
    ),
    "allergy": (
        [
            "I'm allergic to {v}.",
            "Heads up: severe {v} allergy here, so no {v} anywhere.",
            "{V} makes me really sick, I have an allergy.",
        ],
        ["shellfish", "sesame", "peanuts", "kiwi", "buckwheat"],
    ),
    "seat": (
        [
            "I prefer {v} seats on planes.",
            "Always book me a {v} seat, I love it.",
            "I can't stand {o} seats; {v} please.",
        ],
        ["window", "aisle"],
    ),
    "cuisine": (
        ["I love {v} food.", "{V} cuisine is my absolute favourite.", "I'm really into {v} dishes lately."],
        ["Georgian", "Ethiopian", "Peruvian", "Sichuan", "Lebanese"],
    ),
    "dislike": (
        ["I hate {v}.", "Please avoid {v} at all costs.", "I really dislike {v}, they ruin the trip for me."],
        ["red-eye flights", "overnight buses", "hostel dorms", "guided bus tours"],
    ),
    "party": (
        [
            "There will be {v} of us.|of us",
            "We're a group of {v} adults.|adults",
            "{V} people are coming along, me included.|people",
        ],
        ["3", "5", "6", "7"],
    ),
    "deadline": (
        [
            "I must be back home by {v}.",
            "The trip has to end no later than {v}.",
            "I need to return before {v} for work.",
        ],
        ["March 14", "June 3", "September 22", "November 9"],
    ),
    "job": (
        ["I work as a {v}.", "By profession I'm a {v}.", "My job is {v}, so I need good wifi."],
        ["marine biologist", "tax lawyer", "pastry chef", "UX researcher"],
    ),
}
_ZH: dict[str, tuple[list[str], list[str]]] = {
    "name": (["我叫{v}。", "我的名字是{v}。", "大家都叫我{v}。"], ["王小明", "李静怡", "陈志强", "刘思远", "赵雨桐"]),
    "home city": (
        ["我住在{v}。", "我家在{v}。", "我来自{v}，现在也住那里。"],
        ["杭州", "成都", "青岛", "厦门", "昆明"],
    ),
    "budget": (["我的预算是{v}元。", "总共最多花{v}块钱。", "费用不能超过{v}元。"], ["8800", "12500", "6600", "9300"]),
    "allergy": (
        ["我对{v}过敏。", "我吃{v}会过敏，千万别放。", "提醒一下，我有{v}过敏。"],
        ["花生", "海鲜", "芒果", "牛奶"],
    ),
    "cuisine": (["我喜欢{v}。", "{v}是我的最爱。", "我特别爱吃{v}。"], ["川菜", "粤菜", "火锅", "日料"]),
    "dislike": (["我不喜欢{v}。", "请避开{v}。", "我受不了{v}。"], ["转机", "红眼航班", "青年旅舍", "跟团游"]),
    "party": (["我们一共{v}个人。|个人", "这次有{v}位同行。|位", "我们{v}个人一起去。|个人"], ["3", "5", "6"]),
    "deadline": (
        ["我必须在{v}之前回来。", "最晚{v}要结束行程。", "行程不能晚于{v}。"],
        ["3月14日", "6月3日", "9月22日"],
    ),
    "job": (["我是一名{v}。", "我的职业是{v}。", "我在做{v}的工作。"], ["摄影师", "建筑师", "会计师", "兽医"]),
}
_CORRECTION = {
    "en": [
        "Actually, make that {v} euros, not {o}.",
        "Correction: my budget is {v} euros now, not {o}.",
        "I changed my mind, the budget is {v} EUR instead of {o}.",
    ],
    "zh": ["我改主意了，预算改成{v}元。", "更正一下：预算不是{o}元，是{v}元。", "其实预算应该是{v}元，而不是{o}元。"],
}
_TASK = {"en": "Help me plan a two-week trip through the Balkans.", "zh": "帮我规划一次两周的云南旅行。"}
_SYSTEM = {"en": "You are a careful travel-planning agent.", "zh": "你是一个细心的旅行规划助手。"}
_CHAT = {
    "en": [
        "ok thanks",
        "Sounds good.",
        "Hmm, let me think about it.",
        "What's the weather like there in spring?",
        "Can you compare those two options?",
        "Interesting, tell me more about the old town.",
        "Is the train faster than the bus?",
        "Nice, go on.",
        "Any tips for local markets?",
    ],
    "zh": [
        "好的，谢谢",
        "听起来不错。",
        "嗯，我想一想。",
        "那边春天天气怎么样？",
        "能比较一下这两个方案吗？",
        "古城有什么好玩的？",
        "坐火车比坐大巴快吗？",
        "继续吧。",
    ],
}
_NARRATION = {
    "en": [
        "Let me look that up.",
        "I'll check the options now.",
        "Here is what I found so far; the schedule looks feasible.",
        "The old town is walkable and the museums close early on Mondays.",
        "Trains are slower but far more scenic on this route.",
    ],
    "zh": [
        "我来查一下。",
        "我现在看看有哪些选择。",
        "目前查到的情况如下，行程是可行的。",
        "古城可以步行游览，博物馆周一闭馆较早。",
        "这条线路火车慢一些，但风景好很多。",
    ],
}
_ACK = {"en": "Noted.", "zh": "好的，记下了。"}
_PLACES = {
    "en": ["Sarajevo", "Kotor", "Ohrid", "Mostar", "Tirana", "Zadar", "Bled"],
    "zh": ["大理", "丽江", "香格里拉", "西双版纳", "泸沽湖", "腾冲"],
}


def _phrase(template: str, value: str, other: str) -> str:
    return template.replace("{V}", value[:1].upper() + value[1:]).replace("{v}", value).replace("{o}", other)


def _tool_step(rng: random.Random, lang: Language, index: int) -> list[Message]:
    """One ReAct step: thought, tool call, result (sometimes a failure)."""
    place = rng.choice(_PLACES[lang])
    tool, args = rng.choice(
        [
            ("search_flights", {"to": place, "date": f"2025-0{rng.randint(4, 8)}-1{rng.randint(0, 9)}"}),
            ("search_hotels", {"city": place, "nights": rng.randint(1, 4)}),
            ("get_weather", {"city": place}),
            ("convert_currency", {"amount": rng.randint(100, 900), "to": "EUR"}),
        ]
    )
    call_id = f"call_{index}"
    if rng.random() < 0.1:
        result: Any = {"error": "upstream timeout", "status": "failed"}
    elif tool == "get_weather":
        result = {"city": place, "temp_c": rng.randint(8, 29), "sky": rng.choice(["sunny", "cloudy", "rain"])}
    else:
        result = {
            "results": [
                {"name": f"{place} option {i}", "price": rng.randint(100, 990)} for i in range(rng.randint(1, 3))
            ]
        }
    return [
        {"role": "assistant", "content": rng.choice(_NARRATION[lang])},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": call_id,
                    "type": "function",
                    "function": {"name": tool, "arguments": orjson.dumps(args).decode()},
                }
            ],
        },
        {"role": "tool", "tool_call_id": call_id, "content": orjson.dumps(result).decode()},
    ]


def generate(seed: int, turns: int = 300, lang: Language = "en", facts_count: int = 8) -> PlantedConversation:
    """A conversation of about `turns` messages whose facts are all stated in its first fifth."""
    rng = random.Random(seed)
    table = _EN if lang == "en" else _ZH
    slots = rng.sample(sorted(table), min(facts_count, len(table)))
    planted: list[tuple[str, PlantedFact]] = []
    for slot in slots:
        templates, values = table[slot]
        value, other = rng.sample(values, 2) if len(values) > 1 else (values[0], values[0])
        template, _, extra = rng.choice(templates).partition("|")
        statement = _phrase(template, value, other)
        planted.append((statement, PlantedFact(slot, statement, (value, extra) if extra else (value,))))
    if "budget" in slots:
        # The budget is stated, then corrected: only the new value counts, the old one is stale.
        old = next(f for _, f in planted if f.slot == "budget")
        new_value = rng.choice([v for v in table["budget"][1] if v != old.probes[0]])
        fix = _phrase(rng.choice(_CORRECTION[lang]), new_value, old.probes[0])
        planted.append((fix, PlantedFact("budget", fix, (new_value,), stale=old.probes)))
    messages: list[Message] = [{"role": "system", "content": _SYSTEM[lang]}, {"role": "user", "content": _TASK[lang]}]
    # Statements are spread over the first fifth, filler everywhere else.
    early = max(turns // 5, len(planted) * 3)
    due = [2 + (i + 1) * early // (len(planted) + 1) for i in range(len(planted))]
    statements = [s for s, _ in planted]
    index = 0
    while len(messages) < turns:
        index += 1
        if statements and len(messages) >= due[len(planted) - len(statements)]:
            messages.append({"role": "user", "content": statements.pop(0)})
            messages.append({"role": "assistant", "content": _ACK[lang]})
        elif rng.random() < 0.45:
            messages.extend(_tool_step(rng, lang, index))
        else:
            messages.append({"role": "user", "content": rng.choice(_CHAT[lang])})
            messages.append({"role": "assistant", "content": rng.choice(_NARRATION[lang])})
    facts = tuple(f for _, f in planted if not any(f.slot == g.slot and g.stale for _, g in planted if g is not f))
    return PlantedConversation(messages, facts, lang)


_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}\b)")


def is_retained(fact: PlantedFact, lines: Iterable[str]) -> bool:
    """Whether one line holds all the probes of `fact` (case-insensitive, "2,350" == "2350")."""
    probes = [p.lower() for p in fact.probes]
    return any(all(p in _THOUSANDS.sub("", line.lower()) for p in probes) for line in lines)


def retention(facts: Sequence[PlantedFact], text: str) -> float:
    """Share of `facts` retained in `text` (one line per fact or summary line)."""
    lines = text.splitlines()
    return sum(is_retained(f, lines) for f in facts) / len(facts) if facts else 1.0


def message_lines(messages: Sequence[Message]) -> str:
    """The text of messages, one line per line of content."""
    return "\n".join(m.get("content") or "" for m in messages if isinstance(m.get("content"), str))


def digest_text(digest: Digest) -> str:
    """The digest as the model would read it: summary lines, then one line per fact."""
    return "\n".join([digest.summary, *(f"- [{f.type}] {f.text}" for f in digest.facts)]).strip()


def anchor_count(messages: Sequence[Message]) -> int:
    """How many leading messages are pinned: the system message(s) and the first user message."""
    index = 0
    while index < len(messages) and messages[index].get("role") == "system":
        index += 1
    return index + 1 if index < len(messages) and messages[index].get("role") == "user" else index


def stream_compaction(
    messages: Sequence[Message], strategy: Strategy, budget_tokens: int
) -> tuple[Digest, list[Message]]:
    """Feed `messages` one by one; whenever anchors + digest + tail exceed the budget, drop the oldest quarter of
    the tail (never splitting a call from its results) through `strategy`, as a compactor would. Returns (digest, tail)."""
    pinned = list(messages[: anchor_count(messages)])
    digest, tail, first_seq = Digest(), [], len(pinned)
    for message in messages[len(pinned) :]:
        tail.append(message)
        while (
            len(tail) > 1
            and count_messages([*pinned, {"role": "system", "content": digest_text(digest)}, *tail]) > budget_tokens
        ):
            cut = max(1, len(tail) // 4)
            while cut < len(tail) - 1 and tail[cut].get("role") == "tool":
                cut += 1
            digest = strategy.apply(digest, tail[:cut], first_seq)
            tail, first_seq = tail[cut:], first_seq + cut
    return digest, tail


def naive_tail(messages: Sequence[Message], budget_tokens: int) -> list[Message]:
    """The baseline: the newest messages that fit the budget, nothing else."""
    kept: list[Message] = []
    for message in reversed(messages):
        if count_messages([message, *kept]) > budget_tokens:
            break
        kept.insert(0, message)
    return kept
