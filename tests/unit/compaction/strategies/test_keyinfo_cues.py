"""An amount of money with a limit on the same line is a budget, whether or not the word is said."""

import pytest

from turnstream.compaction.strategies.keyinfo import KeyInfoExtractor, classify


@pytest.mark.parametrize(
    "text",
    [
        "Flights at most 900 euros each way",
        "Hotels up to $150 a night please",
        "jobs under 20k",
        "住宿300元以内",
        "the cap is ¥ 8000",
        "first line\nrooms no more than 120 eur",
    ],
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
    [
        "Looks like you had a great day!",
        "like my hand-painted bowl",
        "and it stands for love",
        "Now the hard work starts to turn my dream into a reality.",
        "I'm thrilled to make a family for kids who need one.",
        "Sharing our experiences isn't always easy",
        "I'm always here for you",
        "Just seeing the sun dip below the horizon",
        "It also showed me that tough times don't last",
    ],
)
def test_a_loose_cue_word_that_is_not_the_speakers_own_verb_is_no_fact(text: str) -> None:
    assert classify(text, "user") is None


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("I always want an aisle seat.", "preference"),
        ("We don't want a hostel", "preference"),
        ("I'd love a sea view", "preference"),
        ("we'd rather take the train", "preference"),
        ("I'm into jazz", "preference"),
        ("I never eat pork", "constraint"),
        ("My kids need a pool", "constraint"),
        ("Need a quiet room", "constraint"),
        ("rooms below 90 euros", "constraint"),
        ("I prefer trains", "preference"),
        ("我不吃香菜", "preference"),
        ("Don't book hostels", "constraint"),
        ("I don't eat meat", "constraint"),
        ("my kids don't swim", "constraint"),
    ],
)
def test_the_same_words_as_the_speakers_own_verb_or_before_an_amount_are(text: str, kind: str) -> None:
    found = classify(text, "user")
    assert found is not None and found[0] == kind, found


@pytest.mark.parametrize(
    "text",
    [
        "Enjoy your day!",
        "Must be awesome to see your stuff on display.",
        "Must've taken you ages to design it.",
        "I couldn't agree more.",
        "I couldn't have done it without them.",
        "I love that you chose pottery for your art.",
        "There's something I want to tell you.",
        "I'd love to check them out.",
        "Don't worry",
        "I am always there for you!",
        "I'll let you know if I need anything else.",
        "plus we can always count on them.",
        "no matter what.",
        "别担心",
    ],
)
def test_a_reaction_or_pleasantry_is_no_fact_whatever_cue_it_holds(text: str) -> None:
    assert classify(text, "user") is None


@pytest.mark.parametrize(
    "text",
    [
        "Max",
        "I can picture waking up to nature.",
        "people I looked up to",
        "Never saw this coming.",
        "Don't feel like I'm making much of an impact here",
        "Maybe this is the change I need",
        "the push I needed to do what I love.",
        "I feel like this is my true calling.",
        "We got stuff like canned food",
        "Investing in our future generations is key",
        "Our bond with him was so special and something I cherish.",
        "our fam is so important.",
    ],
)
def test_names_feelings_pasts_and_opinions_are_no_facts(text: str) -> None:
    assert classify(text, "user") is None


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("max 3 stops", ("constraint", "constraint:3-stops")),
        ("up to 2 bags each", ("constraint", "constraint:2-bags")),
        ("Never fly Ryanair", ("constraint", "constraint:fly-ryanair")),
        ("Don't need a car", ("constraint", "constraint:car")),
        ("My hotel is the Hilton", ("fact", "hotel")),
        ("My seat preference is aisle", ("fact", "seat preference")),
        ("I couldn't book the hotel", ("failure", "failure:book-hotel")),
        ("It must be vegetarian", ("constraint", "diet")),
        ("I'd really like a sea view", ("preference", "pref:sea-view")),
    ],
)
def test_the_same_words_as_a_limit_an_instruction_or_a_value_still_are(text: str, found: tuple[str, str]) -> None:
    assert classify(text, "user") == found


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        ("If I need anything, I'll be sure to reach out.", []),
        ("If we need help, we can always count on them.", []),
        ("If possible, I want a window seat.", ["If possible, I want a window seat."]),
        ("If it is over 300 do not book it.", ["If it is over 300 do not book it."]),
    ],
)
def test_a_condition_is_the_context_of_what_follows_it_not_a_fact(text: str, kept: list[str]) -> None:
    facts = KeyInfoExtractor(40).extract((), [{"role": "user", "content": text}], 0)
    assert [fact.text for fact in facts] == kept
