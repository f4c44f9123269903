import pytest

from turnstream.compaction.strategies.base import Fact
from turnstream.memory import append_profile, cut_profile, memories_from_facts, profile_additions


def test_new_facts_are_appended_once() -> None:
    profile = append_profile("", ["My name is Ana", "I love window seats"], 2000)
    assert profile == "My name is Ana\nI love window seats"
    assert append_profile(profile, ["I love window seats", "  My   name is Ana "], 2000) == profile
    assert append_profile(profile, ["I live in Porto"], 2000) == profile + "\nI live in Porto"


def test_a_corrected_fact_replaces_its_old_line() -> None:
    profile = "My name is Ana\nMy budget is 2000 EUR\nI love window seats"
    updated = append_profile(profile, ["Actually my budget is 3500 EUR"], 2000, replaced=["My budget is 2000 EUR"])
    assert updated == "My name is Ana\nI love window seats\nActually my budget is 3500 EUR"


def test_the_window_keeps_the_newest_whole_lines() -> None:
    lines = [f"fact number {n} about the user" for n in range(200)]
    profile = append_profile("", lines, 2000)
    assert len(profile) <= 2000
    assert profile.endswith(lines[-1])
    assert profile.split("\n")[0] in lines  # no line kept in half
    assert len(profile) > 2000 - len(lines[-1]) - 1  # and no more dropped than the cut line


def test_the_window_keeps_whole_chinese_lines() -> None:
    lines = [f"用户第{n}条记忆：喜欢靠窗的座位，预算三千元" for n in range(150)]
    profile = append_profile("", lines, 2000)
    assert len(profile) <= 2000 and profile.split("\n")[0] in lines and profile.endswith(lines[-1])


def test_the_read_cut_keeps_the_newest_lines() -> None:
    profile = "\n".join(f"line {n}: the user likes item {n}" for n in range(40))
    cut = cut_profile(profile, 500)
    assert len(cut) <= 500 and cut.endswith("line 39: the user likes item 39")
    assert cut.split("\n")[0] in profile.split("\n")
    assert cut_profile("short", 500) == "short"


@pytest.mark.parametrize(
    ("text", "first_word"),
    [
        ("word " * 200 + "end", "word"),
        ("用户喜欢靠窗的座位，" * 80 + "结束", "用户"),
    ],
)
def test_one_long_line_is_cut_on_a_word_or_clause_boundary(text: str, first_word: str) -> None:
    cut = cut_profile(text, 500)
    assert len(cut) <= 500 and cut.endswith("end" if first_word == "word" else "结束")
    assert cut.startswith(first_word)


def test_only_facts_and_preferences_enter_the_profile() -> None:
    memories = memories_from_facts(
        "u1",
        [
            Fact("constraint", "My budget is 2000 EUR", "budget"),
            Fact("event", "We booked the hotel", "decision:hotel"),
            Fact("preference", "I like tea", "pref:tea"),
        ],
        "s1",
        0.0,
    )
    assert profile_additions(memories) == ["My budget is 2000 EUR", "I like tea"]
