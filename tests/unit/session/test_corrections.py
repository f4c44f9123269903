"""A correction replaces what it corrects everywhere a session keeps it: the key facts, the long-term memories, the
profile, the memory block of a prompt and the compacted context's facts block. Generated pairs, EN and ZH: an
original statement, then a correction in varied phrasing, each among other clauses."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from hypothesis import given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from turnstream.compaction.strategies.keyinfo import KeyInfoExtractor
from turnstream.memory.profile import append_profile
from turnstream.prompt.assemble import assemble
from turnstream.prompt.read import Recalled
from turnstream.schemas.memory import Memory
from turnstream.schemas.turn import Turn
from turnstream.session import CoreConfig, SessionCore, Step
from turnstream.session.core import SUMMARY_MEMORY_EVERY
from turnstream.session.writes import memory_writes
from turnstream.settings import Settings

NOW = 1_700_000_000.0


@dataclass(frozen=True)
class Slot:
    """One thing a user states and then corrects: how it is said, the values it takes, how it is corrected."""

    originals: tuple[str, ...]
    values: tuple[str, ...]
    corrections: tuple[str, ...]
    """With {a}, the value corrected, and {b}, the new one."""


SLOTS: dict[str, dict[str, Slot]] = {
    "en": {
        "seat": Slot(
            ("I prefer {a} seats.", "I'd rather have {a} seats on flights."),
            ("aisle", "window", "middle"),
            (
                "Correction: I prefer {b} seats, not {a} seats.",
                "Actually, I prefer {b} seats.",
                "Not {a} seats but {b} seats, please.",
                "I prefer {b} seats instead of {a} seats.",
                "I changed my mind: I prefer {b} seats.",
                "On second thought, {b} seats, not {a}.",
                "Rather than {a} seats, I prefer {b} seats.",
                "I no longer want {a} seats, I prefer {b} seats.",
                "No, I prefer {b} seats.",
                "No wait, I prefer {b} seats.",
                "Oops, I meant {b} seats.",
                "Wait, I'd rather have an {b} seat.",
            ),
        ),
        "city": Slot(
            ("I live in {a}.", "My hometown is {a}."),
            ("Lyon", "Nantes", "Porto", "Graz"),
            (
                "Actually I live in {b} now, not {a}.",
                "Correction: I live in {b}.",
                "I no longer live in {a}, I live in {b} now.",
                "Correction: my hometown is {b}, not {a}.",
                "No, I live in {b}.",
                "Sorry, I meant {b}.",
            ),
        ),
        "budget": Slot(
            ("My budget is {a} euros.", "I can spend at most {a} euros on the trip."),
            ("1800", "2400", "3100"),
            (
                "Actually, make that {b} euros, not {a}.",
                "Correction: my budget is {b} euros now, not {a}.",
                "I changed my mind, the budget is {b} EUR instead of {a}.",
                "No, not {a}, make it {b}.",
            ),
        ),
        "drink": Slot(
            ("I love {a} in the morning.", "I really like {a}."),
            ("coffee", "cocoa", "juice"),
            (
                "I no longer drink {a}; I drink {b} now.",
                "Actually I like {b}, not {a}.",
                "I don't drink {a} anymore, only {b}.",
                "Oops, I meant {b}.",
            ),
        ),
    },
    "zh": {
        "seat": Slot(
            ("我喜欢靠{a}的座位。",),
            ("过道", "窗"),
            (
                "更正：我喜欢靠{b}的座位，不是靠{a}的。",
                "不是靠{a}的座位，而是靠{b}的座位。",
                "其实我更喜欢靠{b}的座位。",
                "我改主意了，我喜欢靠{b}的座位。",
                "不对，我喜欢靠{b}的座位。",
                "我是说靠{b}的座位。",
            ),
        ),
        "city": Slot(
            ("我住在{a}。", "我家在{a}。"),
            ("成都", "重庆", "杭州", "南京"),
            (
                "更正一下：我住在{b}，不是{a}。",
                "其实我住在{b}。",
                "我不再住在{a}了，现在住在{b}。",
                "不对，我住在{b}。",
                "我是说{b}。",
            ),
        ),
        "budget": Slot(
            ("我的预算是{a}元。",),
            ("1800", "2400", "3100"),
            ("我改主意了，预算改成{b}元。", "更正一下：预算不是{a}元，是{b}元。", "其实预算应该是{b}元，而不是{a}元。"),
        ),
        "drink": Slot(
            ("我喜欢喝{a}。",),
            ("咖啡", "绿茶", "果汁"),
            ("我不再喝{a}了，改喝{b}。", "其实我更喜欢喝{b}，不是{a}。", "我的意思是{b}。"),
        ),
    },
}
COMPANIONS = {"en": ("I'm allergic to sesame", "my name is Maya"), "zh": ("我对芝麻过敏", "我叫小王")}
"""Another fact said in the same sentence as the original: each clause must keep its own slot."""
AROUND = {"en": ("", "OK. ", "Thanks for the help so far! "), "zh": ("", "好的。", "谢谢你的帮助！")}
AFTER = {"en": ("", " What's next?", " Let's keep going with the plan."), "zh": ("", "接下来呢？", "我们继续吧。")}
FILLER = {"en": "Can you compare the train and the bus for the next leg?", "zh": "下一段路坐火车还是坐大巴比较好？"}


@dataclass(frozen=True)
class Pair:
    lang: str
    original: str
    correction: str
    old: str
    new: str


@st.composite
def pairs(draw: st.DrawFn) -> Pair:
    lang = draw(st.sampled_from(sorted(SLOTS)))
    slot = SLOTS[lang][draw(st.sampled_from(sorted(SLOTS[lang])))]
    old, new = draw(st.permutations(slot.values))[:2]
    original = draw(st.sampled_from(slot.originals)).format(a=old)
    if draw(st.booleans()):  # "Also my hometown is Tampere, and I prefer aisle seats."
        companion = draw(st.sampled_from(COMPANIONS[lang]))
        original = f"Also {companion}, and {original}" if lang == "en" else f"{companion}，{original}"
    correction = draw(st.sampled_from(slot.corrections)).format(a=old, b=new)
    before, after = draw(st.sampled_from(AROUND[lang])), draw(st.sampled_from(AFTER[lang]))
    return Pair(lang, f"{before}{original}{after}", f"{before}{correction}{after}", old, new)


def holding(texts: list[str], pair: Pair) -> list[str]:
    """The texts that say anything of the slot: its old value or its new one."""
    return [text for text in texts if pair.old in text or pair.new in text]


def assert_one_corrected(texts: list[str], pair: Pair) -> None:
    held = holding(texts, pair)
    assert len(held) == 1 and pair.new in held[0], (pair, texts)


def conversation(pair: Pair, filler: int = 0, between: int = 0) -> list[Turn]:
    """The pair's original, `between` filler turns, its correction, `filler` more, each answered."""
    ack = "Noted." if pair.lang == "en" else "好的，记下了。"
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "You plan trips."},
        {"role": "user", "content": "Help me plan a trip." if pair.lang == "en" else "帮我规划旅行。"},
    ]
    fill = [FILLER[pair.lang]]
    for said in (pair.original, *fill * between, pair.correction, *fill * filler):
        messages += [{"role": "user", "content": said}, {"role": "assistant", "content": ack}]
    return [
        Turn(turn_id=f"t{n}", session_id="s1", user_id="maya", seq=n, ts=NOW + n, message=message)
        for n, message in enumerate(messages)
    ]


class MemoryRoom:
    """What Redis keeps of an owner's memories: one per id, and the profile without a rewritten memory's old line."""

    def __init__(self) -> None:
        self.memories: dict[str, Memory] = {}
        self.profile = ""

    def write(self, steps: list[Step]) -> None:
        """One batch's memory writes, as the store applies them (redis/memory_store.py)."""
        for memories, additions in memory_writes(steps).values():
            replaced = [self.memories[m.id].text for m in memories if m.id in self.memories] if memories else []
            self.memories.update((m.id, m) for m in memories)
            self.profile = append_profile(self.profile, additions, 2000, [t for t in replaced if t not in additions])


def run(
    pair: Pair, filler: int = 0, budget: int = 4000, batch: int = 1, between: int = 0
) -> tuple[SessionCore, Any, MemoryRoom]:
    """The conversation of `pair` through the session core, its memory writes applied `batch` turns at a time."""
    core = SessionCore(CoreConfig.from_settings(Settings(budget_tokens=budget)))
    turns = conversation(pair, filler, between)
    state = core.new_state(turns[0])
    room = MemoryRoom()
    steps = [core.on_turn(state, turn, NOW) for turn in turns]
    for start in range(0, len(steps), batch):
        room.write(steps[start : start + batch])
    return core, state, room


@hypothesis_settings(max_examples=300, deadline=None)
@given(pairs())
def test_after_a_correction_one_key_fact_holds_the_slot_and_it_is_the_new_value(pair: Pair) -> None:
    messages = [{"role": "user", "content": pair.original}, {"role": "user", "content": pair.correction}]
    assert_one_corrected([fact.text for fact in KeyInfoExtractor(40).extract((), messages, 0)], pair)


@hypothesis_settings(max_examples=150, deadline=None)
@given(pairs(), st.sampled_from([1, 2, 8]))
def test_after_a_correction_one_memory_and_one_profile_line_hold_the_slot(pair: Pair, batch: int) -> None:
    _, _, room = run(pair, batch=batch)  # 8: the original and its correction stored in one batch
    assert_one_corrected([memory.text for memory in room.memories.values()], pair)
    assert_one_corrected(room.profile.splitlines(), pair)


@hypothesis_settings(max_examples=100, deadline=None)
@given(pairs())
def test_a_prompts_memory_block_says_the_slot_once_with_the_new_value(pair: Pair) -> None:
    core, state, room = run(pair)
    recalled = [Recalled(m.id, m.type, m.text, 1.0, 0) for m in room.memories.values()]
    # the question names neither value, and the context holds nothing else: only the block can say them
    doc = core.context_doc(state, NOW, {}).model_copy(update={"messages": [], "positions": [], "message_tokens": []})
    messages = assemble(doc, room.profile, recalled, [], "What should I book?", Settings()).messages
    block = next(m["content"] for m in messages if m["role"] == "system" and m is not messages[-1])
    (statement,) = holding([memory.text for memory in room.memories.values()], pair)
    lines = holding(block.splitlines(), pair)  # the profile's line and the memory's: one statement, the new value's
    assert lines and all(statement in line for line in lines) and pair.new in statement, (pair, block)


@hypothesis_settings(max_examples=60, deadline=None)
@given(pairs())
def test_the_compacted_contexts_facts_hold_the_slot_once_with_the_new_value(pair: Pair) -> None:
    core, state, _ = run(pair, filler=30, budget=300)
    doc = core.context_doc(state, NOW, {})
    assert doc.marker_index is not None and pair.correction not in [m.get("content") for m in doc.messages]
    assert_one_corrected([fact.text for fact in doc.facts], pair)


ISSUE = (
    "Also my hometown is Tampere, and I prefer aisle seats.",
    "Correction: I prefer window seats, not aisle seats.",
)


def test_the_issue_conversation_keeps_one_seat_preference_in_its_own_words() -> None:
    pair = Pair("en", *ISSUE, "aisle", "window")
    _, _, room = run(pair)
    seats = [m.text for m in room.memories.values() if "seats" in m.text]
    assert seats == ["Correction: I prefer window seats, not aisle seats."]
    assert any("Tampere" in m.text and m.key == "home city" for m in room.memories.values())


def assert_never_old_alone(room: MemoryRoom, pair: Pair) -> None:
    """No memory line, and no profile line, says the old value without the new one beside it."""
    lines = [line for memory in room.memories.values() for line in memory.text.split("\n")] + room.profile.split("\n")
    assert not [line for line in lines if pair.old in line and pair.new not in line], (pair, room.memories)


@hypothesis_settings(max_examples=100, deadline=None)
@given(pairs())
def test_the_summary_memory_of_a_long_session_never_says_the_old_value_without_the_new(pair: Pair) -> None:
    # the original leaves the window for the rolling summary, which keeps it as it was said
    _, state, room = run(pair, filler=30, budget=300)
    assert state.has_dropped and any(memory.type == "summary" for memory in room.memories.values())
    assert_never_old_alone(room, pair)


FAR_PAIRS = pairs().filter(lambda pair: not re.search(r"meant|我是说|意思是", pair.correction))
"""Corrections that reach a fact said long before: "I meant …" corrects only the speaker's previous message."""


@hypothesis_settings(max_examples=100, deadline=None)
@given(FAR_PAIRS)
def test_a_correction_after_the_summary_memory_was_written_rewrites_it_at_once(pair: Pair) -> None:
    # the summary memory is refreshed every SUMMARY_MEMORY_EVERY versions: the one written before the correction
    # says the old value, and the session ends before the next refresh
    _, state, room = run(pair, filler=1, budget=300, between=14)
    assert state.version % SUMMARY_MEMORY_EVERY > 2
    assert_never_old_alone(room, pair)


def test_the_issue_conversation_s_summary_memory_has_the_correction_beside_the_old_preference() -> None:
    pair = Pair("en", *ISSUE, "aisle", "window")
    _, _, room = run(pair, filler=30, budget=300)
    (summary,) = [memory.text for memory in room.memories.values() if memory.type == "summary"]
    assert f"user: {ISSUE[0]} → {ISSUE[1]}" in summary.split("\n"), summary


def test_a_fact_the_correction_drops_without_taking_its_slot_has_its_memory_rewritten() -> None:
    pair = Pair("en", "I prefer aisle seats.", ISSUE[1], "aisle", "window")
    core = SessionCore(CoreConfig.from_settings(Settings()))
    said = [pair.original, "I always book aisle seats because I get up often.", pair.correction]
    turns = [
        Turn(turn_id=f"t{n}", session_id="s1", user_id="maya", seq=n, message={"role": "user", "content": text})
        for n, text in enumerate(said)
    ]
    state, room = core.new_state(turns[0]), MemoryRoom()
    for turn in turns:
        room.write([core.on_turn(state, turn, NOW)])
    assert [fact.text for fact in state.user_facts] == [ISSUE[1]]  # the second statement left the facts
    assert_never_old_alone(room, pair)
    assert f"I always book aisle seats because I get up often. → {ISSUE[1]}" in room.profile.split("\n")
