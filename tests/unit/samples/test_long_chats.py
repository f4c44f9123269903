import pytest

from turnstream.compaction import validate_messages
from turnstream.samples.long_chats import MAX_ANSWER_CHARS, MIN_ANSWER_CHARS, long_chat, long_chats
from turnstream.text.language import detect_language


def test_a_chat_is_the_same_for_the_same_seed_and_another_for_another() -> None:
    assert long_chat("en", 40, seed=3) == long_chat("en", 40, seed=3)
    assert long_chat("en", 40, seed=3).turns != long_chat("en", 40, seed=4).turns
    assert long_chat("zh", 40, seed=3) == long_chat("zh", 40, seed=3)


@pytest.mark.parametrize("language", ["en", "zh"])
def test_answers_are_long_markdown_within_bounds_and_questions_short(language: str) -> None:
    chat = long_chat(language, 120, seed=1)  # type: ignore[arg-type]
    messages = [turn["message"] for turn in chat.turns]
    validate_messages(messages)
    answers = [m["content"] for m in messages if m["role"] == "assistant"]
    asked = [m["content"] for m in messages if m["role"] == "user"]
    assert len(answers) == len(asked) == 60 and [m["role"] for m in messages[:2]] == ["user", "assistant"]
    assert all(MIN_ANSWER_CHARS <= len(a) <= MAX_ANSWER_CHARS for a in answers)
    assert all(len(q) < 120 for q in [*asked, *chat.questions]) and len(chat.questions) == 8
    assert all("## " in a for a in answers)
    assert sum("```" in a for a in answers) > 40 and sum("\n- " in a or "\n1. " in a for a in answers) > 40
    assert detect_language(messages) == language
    assert [t["seq"] for t in chat.turns] == list(range(120)) and sorted(t["ts"] for t in chat.turns) == [
        t["ts"] for t in chat.turns
    ]


def test_the_set_is_each_language_in_turn_each_chat_a_session_of_its_own() -> None:
    chats = long_chats(2, 20)
    assert [c.language for c in chats] == ["en", "en", "zh", "zh"]
    assert len({c.session_id for c in chats}) == 4
