import pytest

from turnstream.text.greeting import is_filler, is_small_talk, without_filler


@pytest.mark.parametrize(
    "text",
    [
        "hi",
        "Hello!",
        "hey there :)",
        "Good morning!!",
        "thanks a lot",
        "Thank you so much!",
        "ok cool",
        "bye, see you later",
        "how are you?",
        "how's it going",
        "what's up",
        "👋",
        "...",
        "",
        "你好",
        "您好！",
        "早上好～",
        "谢谢啦",
        "好的好的",
        "晚安",
        "在吗？",
        "哈哈哈",
        "嗯嗯",
        "拜拜👋",
        "你好呀，小助手",
    ],
)
def test_small_talk_is_detected(text: str) -> None:
    assert is_small_talk(text)


@pytest.mark.parametrize(
    "text",
    [
        "hi, what's my budget for the trip?",
        "hello, can you book the hotel in Lisbon",
        "how much is it",
        "thanks, now find flights to Tokyo on May 3",
        "What is my name?",
        "remind me what I said about allergies",
        "I am allergic to peanuts",
        "no",
        "你好，帮我订一张去上海的机票",
        "我的预算是多少？",
        "我对花生过敏",
        "谢谢，顺便查一下明天北京的天气",
        "hello " * 20,
    ],
)
def test_requests_are_not_small_talk(text: str) -> None:
    assert not is_small_talk(text)


NAMES = frozenset({"melanie", "caroline"})


@pytest.mark.parametrize(
    "sentence",
    [
        "Thanks, Mel!",
        "Wow, that's so inspiring!",
        "Glad to hear it, Caroline.",
        "Your support means a lot to me.",
        "Yeah, that's true!",
        "太好了！",
        "谢谢你！",
        "真棒！",
    ],
)
def test_praise_thanks_and_names_alone_are_filler(sentence: str) -> None:
    assert is_filler(sentence, NAMES)


@pytest.mark.parametrize(
    "sentence",
    [
        "Wow, 3 times!",
        "Thanks for the pottery tips, Mel!",
        "I love pottery.",
        "Thanks, Marco!",
        "Me too.",
        "🙂",
        "我明天去北京。",
        "太好了，Mel！",
    ],
)
def test_a_number_a_topic_or_an_unknown_name_says_something(sentence: str) -> None:
    assert not is_filler(sentence, NAMES)


def test_without_filler_keeps_every_other_sentence_as_written() -> None:
    text = "Thanks, Mel! Your backing really means a lot.\nI felt super   powerful giving my talk (8 May 2023). Wow!"
    assert (
        without_filler(text, NAMES)
        == "Your backing really means a lot.\nI felt super   powerful giving my talk (8 May 2023)."
    )
    assert without_filler("太好了！我明天去北京。真棒！") == "我明天去北京。"


def test_a_turn_of_filler_only_is_kept_whole() -> None:
    assert without_filler("Thanks, Mel! Wow!", NAMES) == "Thanks, Mel! Wow!"
