"""An amount of money with a limit on the same line is a budget, whether or not the word is said."""

import pytest

from turnstream.compaction.strategies.keyinfo import classify


@pytest.mark.parametrize(
    "text",
    ["Flights at most 900 euros each way", "Hotels up to $150 a night please", "jobs under 20k", "住宿300元以内", "the cap is ¥ 8000",
     "first line\nrooms no more than 120 eur"],
)
def test_money_with_a_limit_is_the_budget_slot(text: str) -> None:
    assert classify(text, "user") == ("constraint", "budget")


@pytest.mark.parametrize(
    "text",
    ["The museum costs 20 euros", "At most two stops", "at most\n300 euros", "300 euros\nat most"],
)
def test_money_or_a_limit_alone_or_on_other_lines_is_not(text: str) -> None:
    assert classify(text, "user") != ("constraint", "budget")


@pytest.mark.parametrize(
    "text",
    ["Looks like you had a great day!", "like my hand-painted bowl", "and it stands for love", "Now the hard work starts to turn my dream into a reality.",
     "I'm thrilled to make a family for kids who need one.", "Sharing our experiences isn't always easy", "I'm always here for you",
     "Just seeing the sun dip below the horizon", "It also showed me that tough times don't last"],
)
def test_a_loose_cue_word_that_is_not_the_speakers_own_verb_is_no_fact(text: str) -> None:
    assert classify(text, "user") is None


@pytest.mark.parametrize(
    ("text", "kind"),
    [("I always want an aisle seat.", "preference"), ("We don't want a hostel", "preference"), ("I'd love a sea view", "preference"),
     ("we'd rather take the train", "preference"), ("I'm into jazz", "preference"), ("I never eat pork", "constraint"),
     ("My kids need a pool", "constraint"), ("Need a quiet room", "constraint"), ("rooms below 90 euros", "constraint"),
     ("I prefer trains", "preference"), ("我不吃香菜", "preference"), ("Don't book hostels", "constraint"),
     ("I don't eat meat", "constraint"), ("my kids don't swim", "constraint")],
)
def test_the_same_words_as_the_speakers_own_verb_or_before_an_amount_are(text: str, kind: str) -> None:
    found = classify(text, "user")
    assert found is not None and found[0] == kind, found
