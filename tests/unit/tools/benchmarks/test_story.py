"""The story figure's pure scoring: an event is told when half its content words stand within three lines."""

from __future__ import annotations

import pytest

from turnstream_tools.benchmarks.story import content_words, share_told, story_cases, story_figure, text_lines, told

NAMES = ("Melanie", "Caroline")


def lines(*texts: str) -> list[frozenset[str]]:
    return text_lines([{"role": "system", "content": "\n".join(texts)}], NAMES)


def test_content_words_drop_stop_words_and_names_and_cut_suffixes() -> None:
    assert content_words("Melanie registers for a pottery class.", NAMES) == {"register", "pottery", "class"}
    assert content_words("Caroline's painting", NAMES) == {"paint"}
    assert content_words("我报了陶艺课") == {"我报", "报了", "了陶", "陶艺", "艺课"}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (["Melanie: I signed up for a pottery class yesterday!"], True),  # pottery, class: 2 of 3
        (["Melanie: pottery is fun"], False),  # 1 of 3
        (["a class", "something else", "pottery"], True),  # within three lines
        (["a class", "one", "two", "pottery"], False),  # four lines apart
        ([], False),
    ],
)
def test_an_event_is_told_when_half_its_words_stand_close(text: list[str], expected: bool) -> None:
    assert told("Melanie registers for a pottery class.", lines(*text), NAMES) is expected


def test_an_event_of_names_and_stop_words_only_is_never_told() -> None:
    assert not told("Melanie and Caroline.", lines("Melanie and Caroline."), NAMES)


def test_share_told_is_a_percent_of_the_events() -> None:
    messages = [{"role": "user", "content": "I ran a charity race for mental health"}]
    events = ["Melanie runs a charity race for mental health.", "Caroline adopts a dog."]
    assert share_told(events, messages, NAMES) == 50.0
    assert share_told([], messages, NAMES) == 0.0


def test_the_story_figure_runs_offline_on_the_shipped_chats() -> None:
    figure = story_figure(story_cases(None))
    assert set(figure.data) == {"budget_tokens", "generated en", "generated zh"} and figure.target is None
    english = figure.data["generated en"]
    assert english["events"] == 10 and english["full history"] == 100.0
    assert english["turnstream"] > english["newest tail"]
