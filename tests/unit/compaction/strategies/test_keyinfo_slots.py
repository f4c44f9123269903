"""A user's named slots (budget, name…) keep the value the user stated, whatever else mentions them."""

import pytest

from turnstream.compaction.strategies.keyinfo import KeyInfoExtractor, classify


def budget_after(*messages: tuple[str, str]) -> list[str]:
    facts = KeyInfoExtractor(40).extract((), [{"role": role, "content": text} for role, text in messages], 0)
    return [fact.text for fact in facts if fact.key == "budget"]


@pytest.mark.parametrize(
    "later",
    [
        ("user", "Are we under budget?"),
        ("user", "预算够吗？"),
        ("user", "Budget stays the same."),
        ("assistant", "Filtering to 220 EUR a night keeps hotels under about 1900 EUR in total."),
    ],
)
def test_the_stated_budget_survives(later: tuple[str, str]) -> None:
    assert budget_after(("user", "My budget is 4800 EUR for the whole trip."), later) == [
        "My budget is 4800 EUR for the whole trip."
    ]


def test_the_users_correction_still_replaces_it() -> None:
    kept = budget_after(
        ("user", "My budget is 4800 EUR for the whole trip."), ("user", "Actually my budget is 5200 EUR, not 4800.")
    )
    assert len(kept) == 1 and "5200" in kept[0] and "4800 EUR for" not in kept[0]


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("I always want an aisle seat.", "preference"),
        ("I need a proper desk because I'll work two mornings.", "constraint"),
        ("No hostels and nothing in party areas.", "constraint"),
        ("Courier pickup only on Saturday mornings.", "constraint"),
        ("我需要一个安静的房间。", "constraint"),
    ],
)
def test_needs_wants_and_refusals_are_kept(text: str, kind: str) -> None:
    facts = KeyInfoExtractor(40).extract((), [{"role": "user", "content": text}], 0)
    assert [fact.type for fact in facts] == [kind], facts


@pytest.mark.parametrize("text", ["No.", "no thanks", "Nothing else, thanks!"])
def test_a_bare_no_is_not_a_constraint(text: str) -> None:
    assert KeyInfoExtractor(40).extract((), [{"role": "user", "content": text}], 0) == ()


@pytest.mark.parametrize(
    ("mine", "theirs", "slot", "relative"),
    [
        ("I live in Lyon.", "My brother moved to Valparaiso for his job.", "home city", "brother"),
        ("I'm allergic to sesame.", "My youngest son is allergic to peanuts.", "allergy", "son"),
        ("I'm vegetarian.", "My husband's vegan.", "diet", "husband"),
        ("我住在杭州。", "我哥哥因为工作搬到了成都。", "home city", "哥哥"),
    ],
)
def test_a_relatives_slot_is_theirs_and_leaves_the_speakers_own(
    mine: str, theirs: str, slot: str, relative: str
) -> None:
    facts = KeyInfoExtractor(40).extract(
        (), [{"role": "user", "content": mine}, {"role": "user", "content": theirs}], 0
    )
    assert [(f.key, f.text) for f in facts] == [(slot, mine), (f"{relative} {slot}", theirs)]


@pytest.mark.parametrize(
    "text",
    [
        "My wife and I moved to Lyon.",
        "Me and my brother moved to Lyon.",
        "I live near my brother.",
        "我和我妈妈住在上海。",
    ],
)
def test_a_move_the_speaker_shares_is_the_speakers(text: str) -> None:
    assert classify(text, "user") == ("fact", "home city")


@pytest.mark.parametrize(
    "later", ["Losing my job was a bummer.", "It's been tough going since I lost my job.", "Losing my job was hard."]
)
def test_talk_about_the_job_leaves_the_stated_occupation(later: str) -> None:
    facts = KeyInfoExtractor(40).extract(
        (), [{"role": "user", "content": "I lost my job as a banker yesterday."}, {"role": "user", "content": later}], 0
    )
    assert [(f.key, f.text) for f in facts] == [("occupation", "I lost my job as a banker yesterday.")]


@pytest.mark.parametrize(
    "text",
    [
        "What are their names?",
        "I used to go horseback riding with my dad when I was a kid.",
        "Unemployment in our community was the reason behind it.",
        "I learnt that my own happiness is the most important thing.",
        "Those milestones are great reminders of how special our bonds are.",
        "I color-code achievements so I can easily track my progress and stay motivated.",
    ],
)
def test_an_object_a_question_or_an_exclamation_sets_no_slot(text: str) -> None:
    found = classify(text, "user")
    assert found is None or ":" in found[1]  # a generic fact at most, never a named slot another clause overwrites


@pytest.mark.parametrize(
    ("text", "slot"),
    [
        ("My goal is to give kids a loving home.", "goal"),
        ("By the way, my sister's cat is called Pistachio.", "sister cat"),
        ("My name's Ana.", "name"),
        ("My family is my motivation.", "family"),
    ],
)
def test_the_speakers_own_subject_still_sets_its_slot(text: str, slot: str) -> None:
    assert classify(text, "user") == ("fact", slot)
