import pytest

from turnstream.compaction.greeting import is_small_talk



@pytest.mark.parametrize(
    "text",
    [
        "hi", "Hello!", "hey there :)", "Good morning!!", "thanks a lot", "Thank you so much!", "ok cool",
        "bye, see you later", "how are you?", "how's it going", "what's up", "👋", "...", "",
        "你好", "您好！", "早上好～", "谢谢啦", "好的好的", "晚安", "在吗？", "哈哈哈", "嗯嗯", "拜拜👋", "你好呀，小助手",
    ],
)
def test_small_talk_is_detected(text: str) -> None:
    assert is_small_talk(text)


@pytest.mark.parametrize(
    "text",
    [
        "hi, what's my budget for the trip?", "hello, can you book the hotel in Lisbon", "how much is it",
        "thanks, now find flights to Tokyo on May 3", "What is my name?", "remind me what I said about allergies",
        "I am allergic to peanuts", "no", "你好，帮我订一张去上海的机票", "我的预算是多少？", "我对花生过敏",
        "谢谢，顺便查一下明天北京的天气", "hello " * 20,
    ],
)
def test_requests_are_not_small_talk(text: str) -> None:
    assert not is_small_talk(text)
