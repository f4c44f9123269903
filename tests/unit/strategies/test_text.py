import pytest

from turnstream.compaction.strategies.text import clauses, detect_language, keywords, message_text, sentences



@pytest.mark.parametrize(
    ("text", "lang"),
    [("I live in Porto and love it", "en"), ("我住在杭州，喜欢川菜", "zh"), ("我用 Python 写代码", "zh"), ("hello 你", "en"), ("", "en")],
)
def test_detect_language(text: str, lang: str) -> None:
    assert detect_language(text) == lang


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


def test_message_text_includes_tool_calls_and_content_parts() -> None:
    message = {"role": "assistant", "content": [{"type": "text", "text": "checking"}], "tool_calls": [{"id": "1", "function": {"name": "search", "arguments": '{"q": "x"}'}}]}
    assert message_text(message) == 'checking\nsearch({"q": "x"})'
