from hypothesis import given, settings
from hypothesis import strategies as st

from turnstream.text.prose import clauses, keywords, sentences, span_language

# What the splitters and the keyword reader look at: sentence ends, clause separators, numbers, CJK, case.
PIECES = [
    "I",
    "my",
    "budget",
    "Kyoto",
    " ",
    "  ",
    "\n",
    ".",
    ". ",
    "!",
    "?",
    "。",
    "！",
    ",",
    "，",
    "、",
    ";",
    " and ",
    " but ",
    "2,000",
    "3.5",
    "的",
    "我喜欢",
    "川菜",
    "但是",
    "-",
    ":",
    "：",
    "\t",
    "THE",
]


def test_a_span_speaks_its_user_s_language_else_its_prose_and_the_summary_so_far() -> None:
    user = {"role": "user", "content": "我想订京都酒店"}
    assistant = {"role": "assistant", "content": "Sure, I can look for hotels in Kyoto for you."}
    assert span_language([assistant, user], "user: plan a trip") == "zh"
    assert span_language([assistant], "用户：我想去京都") == "en"
    assert span_language([{"role": "tool", "tool_call_id": "1", "content": "hotels"}], "用户：我想去京都") == "zh"
    assert span_language([], "") == "en"


def test_keywords_drop_stopwords_and_lowercase() -> None:
    assert keywords("I would really LIKE the Window seat on the Lufthansa flight") == (
        "window",
        "seat",
        "lufthansa",
        "flight",
    )


def test_keywords_join_thousands_and_make_cjk_bigrams() -> None:
    keys = keywords("budget $2,000 我喜欢川菜")
    assert "2000" in keys and "川菜" in keys and "喜欢" in keys
    assert keywords("的了") == ()  # a bigram of function characters carries nothing


def test_sentences_keep_decimals_and_split_cjk() -> None:
    assert sentences("Rated 4.5 stars. Cheap! 我喜欢。好的") == ("Rated 4.5 stars.", "Cheap!", "我喜欢。", "好的")


def test_clauses_split_on_commas_but_not_inside_numbers() -> None:
    assert clauses("My budget is $3,000, not 2000; and I hate layovers") == (
        "My budget is $3,000",
        "not 2000",
        "I hate layovers",
    )
    assert clauses("My name is Ana and I live in Porto") == ("My name is Ana", "I live in Porto")


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=40), st.none() | st.integers(0, 8))
def test_remembered_splits_and_keywords_are_those_of_a_fresh_reading(parts: list[str], limit: int | None) -> None:
    text = "".join(parts)
    for _ in range(2):  # the first call may compute, the second is answered from memory
        assert sentences(text) == sentences.__wrapped__(text)
        assert clauses(text) == clauses.__wrapped__(text)
        assert keywords(text, limit) == keywords.__wrapped__(text, limit)
