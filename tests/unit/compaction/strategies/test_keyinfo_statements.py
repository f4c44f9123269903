"""Key facts as statements that stand alone: the subject kept, the date and speaker said, the latest form kept."""

from __future__ import annotations

import pytest

from turnstream.compaction.strategies import Digest
from turnstream.compaction.strategies.keyinfo import KeyInfoExtractor

MAY_8 = 1_683_540_000.0  # 8 May 2023, 10:00 UTC
DAY = 86_400.0


def facts_of(*said: tuple[str, float | None], name: str | None = "Maya") -> list[str]:
    messages = [{"role": "user", "content": text, **({"name": name} if name else {})} for text, _ in said]
    digest = KeyInfoExtractor().apply(Digest(times=tuple(ts for _, ts in said)), messages, 0)
    return [fact.text for fact in digest.facts]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # a clause that starts mid-sentence gives its whole sentence, subject included
        (
            "For the room: quiet, I need a proper desk because I'll work two mornings.",
            "[2023-05-08] Maya: For the room: quiet, I need a proper desk because I'll work two mornings.",
        ),
        # "香菜不要放" has no subject: the sentence is the statement, and its clause with one is not a second fact
        ("香菜不要放，我怀孕以后闻到就受不了。", "[2023-05-08] Maya: 香菜不要放，我怀孕以后闻到就受不了。"),
    ],
)
def test_a_fact_keeps_its_subject_and_says_when_and_who(text: str, expected: str) -> None:
    assert facts_of((text, MAY_8)) == [expected]


def test_no_fragment_without_a_subject_is_a_fact() -> None:
    for fact in facts_of(("For the room: quiet, I need a proper desk because I'll work two mornings.", MAY_8)):
        assert not fact.split(": ", 1)[-1].startswith("quiet")


def test_a_fact_without_a_time_or_a_name_is_the_statement_alone() -> None:
    assert facts_of(("I'm allergic to sesame.", None), name=None) == ["I'm allergic to sesame."]


def test_a_restated_fact_keeps_its_latest_form_and_date() -> None:
    facts = facts_of(("My budget is 2000 euros.", MAY_8), ("Actually my budget is 2500 euros now.", MAY_8 + 3 * DAY))
    budget = [f for f in facts if "budget" in f]
    assert budget == ["[2023-05-11] Maya: Actually my budget is 2500 euros now."]


@pytest.mark.parametrize(
    "text",
    ["That must have been awesome.", "Can't wait to see your pottery project!", "Let me know if you need anything."],
)
def test_a_reaction_to_the_other_side_is_no_fact(text: str) -> None:
    assert facts_of((text, MAY_8)) == []


def test_a_changed_preference_replaces_the_old_one() -> None:
    facts = facts_of(("I prefer window seats.", MAY_8), ("On second thought I prefer aisle seats.", MAY_8 + DAY))
    assert facts == ["[2023-05-09] Maya: On second thought I prefer aisle seats."]


def test_preferences_that_end_at_their_cue_keep_keys_of_their_own() -> None:
    # "受不了" ends both clauses: the key is made of what the clause says, not of the full stop after the cue
    facts = facts_of(("我不吃香菜，闻到就受不了。", MAY_8), ("我不喝咖啡，一喝就心慌，真受不了。", MAY_8 + DAY))
    assert facts == [
        "[2023-05-08] Maya: 我不吃香菜，闻到就受不了。",
        "[2023-05-09] Maya: 我不喝咖啡，一喝就心慌，真受不了。",
    ]


@pytest.mark.parametrize(
    ("first", "correction", "latest"),
    [
        (
            "My budget is 2,000 euros for the trip.",
            "Actually, make that 2,500.",
            "My budget is 2,500 euros for the trip.",
        ),
        ("We are 4 people.", "Sorry, make it 5.", "We are 5 people."),
        ("My budget is 2000 euros.", "No, 2500.", "My budget is 2500 euros."),
        ("预算2000元。", "改成2500吧。", "预算2500元。"),
    ],
)
def test_a_correction_that_names_no_slot_gives_the_newest_value_its_slot(
    first: str, correction: str, latest: str
) -> None:
    facts = facts_of((first, MAY_8), (correction, MAY_8 + DAY))
    assert facts == [f"[2023-05-09] Maya: {latest}"]


def test_a_bare_correction_with_two_numbers_or_none_changes_nothing() -> None:
    kept = ["[2023-05-08] Maya: My budget is 2000 euros."]
    assert facts_of(("My budget is 2000 euros.", MAY_8), ("Actually, make that 2500 or 3000.", MAY_8 + DAY)) == kept
    assert facts_of(("My budget is 2000 euros.", MAY_8), ("Actually, change it to more.", MAY_8 + DAY)) == kept


@pytest.mark.parametrize("text", ["Actually it was 3 weeks ago.", "Actually, the museum opens at 10."])
def test_a_correction_stating_something_else_leaves_the_last_value_alone(text: str) -> None:
    facts = facts_of(("My budget is 2000 euros.", MAY_8), (text, MAY_8 + DAY))
    assert "[2023-05-08] Maya: My budget is 2000 euros." in facts
