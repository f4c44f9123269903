import pytest

from turnstream.compaction.strategies.text import clauses, keywords, sentences, span_language



def test_a_span_speaks_its_user_s_language_else_its_prose_and_the_summary_so_far() -> None:
    user = {"role": "user", "content": "我想订京都酒店"}
    assistant = {"role": "assistant", "content": "Sure, I can look for hotels in Kyoto for you."}
    assert span_language([assistant, user], "user: plan a trip") == "zh"
    assert span_language([assistant], "用户：我想去京都") == "en"
    assert span_language([{"role": "tool", "tool_call_id": "1", "content": "hotels"}], "用户：我想去京都") == "zh"
    assert span_language([], "") == "en"


def test_keywords_drop_stopwords_and_lowercase() -> None:
    assert keywords("I would really LIKE the Window seat on the Lufthansa flight") == ("window", "seat", "lufthansa", "flight")


def test_keywords_join_thousands_and_make_cjk_bigrams() -> None:
    keys = keywords("budget $2,000 我喜欢川菜")
    assert "2000" in keys and "川菜" in keys and "喜欢" in keys
    assert keywords("的了") == ()  # a bigram of function characters carries nothing


def test_sentences_keep_decimals_and_split_cjk() -> None:
    assert sentences("Rated 4.5 stars. Cheap! 我喜欢。好的") == ["Rated 4.5 stars.", "Cheap!", "我喜欢。", "好的"]


def test_clauses_split_on_commas_but_not_inside_numbers() -> None:
    assert clauses("My budget is $3,000, not 2000; and I hate layovers") == ["My budget is $3,000", "not 2000", "I hate layovers"]
    assert clauses("My name is Ana and I live in Porto") == ["My name is Ana", "I live in Porto"]
