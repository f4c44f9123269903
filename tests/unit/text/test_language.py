import pytest

from turnstream.text.language import LanguageTally, detect_language, text_language

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(
    ("text", "lang"),
    [
        ("I live in Porto and love it", "en"),
        ("我住在杭州，喜欢川菜", "zh"),
        ("我用 Python 写代码", "zh"),
        ("hello 你", "en"),
        ("", "en"),
        # six Han characters carry about as much as 23 Latin letters: 6 * 4 >= 23
        ("我想订京都酒 can you do it for me by the way", "zh"),
    ],
)
def test_text_language(text: str, lang: str) -> None:
    assert text_language(text) == lang


def test_the_user_s_text_decides_when_there_is_any() -> None:
    system = {"role": "system", "content": "You are a helpful assistant. Answer in the user's language."}
    user = {"role": "user", "content": "帮我规划行程"}
    assert detect_language([system, user]) == "zh"
    assert detect_language([system, {"role": "assistant", "content": "我来帮你"}]) == "en"  # no user text: all the rest
    assert detect_language([{"role": "assistant", "content": "我来帮你"}]) == "zh"


def test_tool_results_and_shapes_without_a_role_count_nothing() -> None:
    tally = LanguageTally()
    tally.add({"role": "tool", "tool_call_id": "1", "content": "大量的中文工具结果"})
    tally.add({"content": "没有角色"})
    tally.add("not a message")
    assert tally.counts == [0, 0, 0, 0]
