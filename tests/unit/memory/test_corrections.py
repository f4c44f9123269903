"""A correction reaches a memory of other words that restates the value it corrects: each sentence that states the
old value is followed by the correcting fact; nothing else of the text changes. The facts come from the offline
extractor, as the session core learns them."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from hypothesis import given
from hypothesis import strategies as st

from turnstream.compaction.strategies.base import Fact
from turnstream.compaction.strategies.keyinfo import KeyInfoExtractor
from turnstream.memory.corrections import BESIDE, old_values, reconcile, restating, stated


def learned(*said: str) -> tuple[Fact, ...]:
    """The user's facts after saying `said`, one message each, in order."""
    facts: tuple[Fact, ...] = ()
    for seq, text in enumerate(said):
        facts = KeyInfoExtractor(40).extract(facts, [{"role": "user", "content": text}], seq)
    return facts


# (what the user said first, the correction, a summary line, that line with the correction beside it)
RESTATED = [
    (
        "Also my hometown is Tampere, and I prefer aisle seats.",
        "Correction: I prefer window seats, not aisle seats.",
        "user: Also my hometown is Tampere, and I prefer aisle seats.",
        "user: Also my hometown is Tampere, and I prefer aisle seats."
        " → Correction: I prefer window seats, not aisle seats.",
    ),
    (  # the correction names no old value: it took over the slot of the preference it replaces
        "I prefer aisle seats.",
        "I changed my mind: I prefer window seats.",
        "user: Also my name is Maya, and I prefer aisle seats.",
        "user: Also my name is Maya, and I prefer aisle seats. → I changed my mind: I prefer window seats.",
    ),
    (  # a new value alone, which the facts rewrite in the old statement's words
        "My budget is 2000 euros.",
        "Actually, make that 2500.",
        "user: My budget is 2000 euros, flights included.",
        "user: My budget is 2000 euros, flights included. → My budget is 2500 euros.",
    ),
    (
        "I live in Lyon.",
        "No, I live in Porto.",
        "Maya: I live in Lyon and work remotely.",
        "Maya: I live in Lyon and work remotely. → I live in Porto.",
    ),
    (  # the assistant repeating the old value says it as current too
        "I prefer aisle seats.",
        "Correction: I prefer window seats, not aisle seats.",
        "assistant: Noted, aisle seats for all flights.",
        "assistant: Noted, aisle seats for all flights. → Correction: I prefer window seats, not aisle seats.",
    ),
    (  # the old value in the line's second sentence: the correction follows that sentence
        "I prefer aisle seats.",
        "Correction: I prefer window seats, not aisle seats.",
        "The user flies to Lisbon. They prefer aisle seats. The trip is in May.",
        "The user flies to Lisbon. They prefer aisle seats. → Correction: I prefer window seats, not aisle seats. "
        "The trip is in May.",
    ),
    (
        "我住在上海。",
        "不是上海，而是重庆。",
        "用户：我住在上海，周末想去爬山。",
        "用户：我住在上海，周末想去爬山。 → 不是上海，而是重庆。",
    ),
    (
        "我住在上海。",
        "更正一下：我住在重庆，不是上海。",
        "用户：我住在上海。",
        "用户：我住在上海。 → 更正一下：我住在重庆，不是上海。",
    ),
    (
        "我的预算是1800元。",
        "更正一下：预算不是1800元，是2400元。",
        "用户：我的预算是1800元，住经济型酒店。",
        "用户：我的预算是1800元，住经济型酒店。 → 更正一下：预算不是1800元，是2400元。",
    ),
    (
        "我喜欢靠过道的座位。",
        "其实我更喜欢靠窗的座位。",
        "用户：我对芝麻过敏，我喜欢靠过道的座位。",
        "用户：我对芝麻过敏，我喜欢靠过道的座位。 → 其实我更喜欢靠窗的座位。",
    ),
    (
        "我喜欢喝咖啡。",
        "其实我更喜欢喝绿茶，不是咖啡。",
        "用户：我喜欢喝咖啡。",
        "用户：我喜欢喝咖啡。 → 其实我更喜欢喝绿茶，不是咖啡。",
    ),
]


@pytest.mark.parametrize(("original", "correction", "line", "expected"), RESTATED)
def test_a_line_that_states_the_old_value_gets_the_correction_beside_it(
    original: str, correction: str, line: str, expected: str
) -> None:
    assert reconcile(line, learned(original, correction)) == expected


SEATS = (
    "Also my hometown is Tampere, and I prefer aisle seats.",
    "Correction: I prefer window seats, not aisle seats.",
)
CITY = ("我住在上海。", "不是上海，而是重庆。")

# (what the user said, a summary line no fact of it replaces)
UNCHANGED = [
    (SEATS, "[2023-11-14]"),  # a period's header
    (SEATS, "user: Also my hometown is Tampere, and I'd like a quiet hotel."),  # the hometown still holds
    (SEATS, "user: Correction: I prefer window seats, not aisle seats."),  # the correction itself
    (SEATS, "user: I prefer window seats, not aisle seats, on every leg."),
    (SEATS, "assistant: Window seats it is, on every flight."),  # the new value in other words
    (SEATS, "user: The aisle seats were taken. → Correction: I prefer window seats, not aisle seats."),  # beside
    (SEATS, "step: called book_seat(seat=aisle) -> ok"),  # a call as it was made: it names no seats
    (("I prefer tea, not coffee.",), "user: Coffee at eight is a must."),  # a contrast, not a correction
    (("I do not eat pork.",), "user: I do not eat pork."),
    (CITY, "用户：我不是上海人，而是重庆人。"),  # the line's own correction
    (CITY, "用户：我更正一下，不是上海，而是重庆。"),
    (CITY, "助手：好的，重庆的天气不错。"),
    ((), "user: I prefer aisle seats."),  # no facts, nothing to put right
    (  # a restatement that is no correction shares a generic key (its first words) and replaces nothing
        (
            "Our cache invalidation calls keep timing out against Redis; it started two days ago.",
            "Our cache invalidation calls keep timing out against Redis; it started yesterday.",
        ),
        "user: Our cache invalidation calls keep timing out against Redis; it started on Monday.",
    ),
]


@pytest.mark.parametrize(("said", "line"), UNCHANGED)
def test_a_line_no_fact_replaces_is_left_as_it_is(said: Sequence[str], line: str) -> None:
    assert reconcile(line, learned(*said)) == line


@pytest.mark.parametrize(
    ("text", "old"),
    [
        ("Correction: I prefer window seats, not aisle seats.", [{"aisle", "seats"}]),
        ("I'd rather take the train instead of the bus.", [{"bus"}]),
        ("No, not 2000, make it 2500.", [{"2000"}]),
        ("不是上海，而是重庆。", [{"上海"}]),
        ("I do not eat pork.", []),  # no correction: "not" names nothing as wrong
        ("I prefer tea, not coffee.", []),
    ],
)
def test_old_values_are_what_a_correction_names_as_wrong(text: str, old: list[set[str]]) -> None:
    assert [set(value) for value in old_values(text)] == old


def test_what_a_correction_states_leaves_out_the_value_it_names_as_wrong_and_its_cue_words() -> None:
    assert stated("Correction: I prefer window seats, not aisle seats.") == {"window", "seat"}
    assert stated("I do not eat pork.") >= {"pork"}  # a plain "not" is part of what is said


def test_a_summary_of_many_lines_gets_the_correction_once_a_line_and_only_where_it_is_due() -> None:
    summary = "\n".join(
        [
            "[2023-11-14]",
            "user: Also my hometown is Tampere, and I prefer aisle seats.",
            "assistant: Noted.",
            "user: Aisle seats help me get up. Aisle seats, always.",
            "user: Can you compare the train and the bus for the next leg?",
        ]
    )
    correction = f"{BESIDE}Correction: I prefer window seats, not aisle seats."
    assert reconcile(summary, learned(*SEATS)).split("\n") == [
        "[2023-11-14]",
        f"user: Also my hometown is Tampere, and I prefer aisle seats.{correction}",
        "assistant: Noted.",
        f"user: Aisle seats help me get up.{correction} Aisle seats, always.",
        "user: Can you compare the train and the bus for the next leg?",
    ]


def test_earlier_facts_of_other_slots_that_state_the_old_value_are_rewritten() -> None:
    before = learned("I prefer aisle seats.", "I always book aisle seats because I get up often.", "My name is Maya.")
    after = KeyInfoExtractor(40).extract(before, [{"role": "user", "content": SEATS[1]}], 3)
    new = [fact for fact in after if fact not in before]
    # the correction took the preference's slot and dropped the other fact: that fact's memory must change too
    assert [fact.key for fact in new] == ["pref:aisle-seats"]
    (rewritten,) = restating(before, new)
    assert rewritten.key == "constraint:book-aisle-seats"
    assert rewritten.text == f"I always book aisle seats because I get up often.{BESIDE}{SEATS[1]}"
    assert restating(before, []) == []


# Summaries from sentences about the slots of SEATS and CITY, old values and new, and others.
SENTENCES = (
    "I prefer aisle seats.",
    "Aisle seats, please.",
    "I prefer window seats, not aisle seats.",
    "The hotel is near the station.",
    "Also my hometown is Tampere.",
    "我住在上海。",
    "我们去重庆玩。",
    "不是上海，而是重庆。",
    "周末想去爬山。",
)
LABELS = ("user: ", "assistant: ", "Maya: ", "用户：", "")
lines = st.builds(
    lambda label, said: label + " ".join(said),
    st.sampled_from(LABELS),
    st.lists(st.sampled_from(SENTENCES), max_size=3),
)
summaries = st.lists(st.one_of(lines, st.just("[2023-11-14]")), max_size=8).map("\n".join)
facts = st.sampled_from([learned(*SEATS), learned(*CITY), learned(*SEATS, *CITY), ()])


@given(summaries, facts)
def test_reconciling_only_adds_corrections_after_sentences_and_is_done_once(
    summary: str, said: tuple[Fact, ...]
) -> None:
    out = reconcile(summary, said)
    assert reconcile(out, said) == out  # a rewritten memory rewritten again stays as it is
    restored = out
    for fact in said:
        restored = restored.replace(BESIDE + fact.text, "")
    assert restored == summary  # the summary's own words are all there, in their order
    assert len(out.split("\n")) == len(summary.split("\n"))


@given(summaries)
def test_every_line_that_says_the_old_value_as_it_was_first_said_has_the_new_one_beside_it(summary: str) -> None:
    for line in reconcile(summary, learned(*SEATS, *CITY)).split("\n"):
        assert "I prefer aisle seats" not in line or "window seats" in line, line
        assert "我住在上海" not in line or "重庆" in line, line
