from datetime import UTC, datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from turnstream.text import dates
from turnstream.text.dates import ground_dates
from turnstream.text.language import Language
from turnstream.text.locale import LOCALES

MONDAY_8_MAY_2023 = 1683554160.0


@pytest.mark.parametrize(
    ("said", "grounded"),
    [
        ("I went yesterday.", "I went yesterday (7 May 2023)."),
        ("Tomorrow works.", "Tomorrow (9 May 2023) works."),
        ("We ran last Sunday.", "We ran last Sunday (7 May 2023)."),
        ("See you next Friday!", "See you next Friday (12 May 2023)!"),
        ("Last week was busy.", "Last week (the week before 8 May 2023) was busy."),
        ("We camped last weekend.", "We camped last weekend (the weekend before 8 May 2023)."),
        ("I moved last month.", "I moved last month (April 2023)."),
        ("Back in January? No, last year.", "Back in January? No, last year (2022)."),
        ("We met 4 years ago.", "We met 4 years ago (2019)."),
        ("It started three days ago.", "It started three days ago (5 May 2023)."),
        ("Next month in Lisbon.", "Next month (June 2023) in Lisbon."),
        ("Nothing relative here.", "Nothing relative here."),
        ("Last Fri I took the kids.", "Last Fri (Friday, 5 May 2023) I took the kids."),
        ("I joined last tues.", "I joined last tues (Tuesday, 2 May 2023)."),
        ("Back next Thurs", "Back next Thurs (Thursday, 11 May 2023)"),
        ("We hiked last Sat.", "We hiked last Sat (Saturday, 6 May 2023)."),
        ("the one who last sat there", "the one who last sat there"),
        ("We camped two weekends ago.", "We camped two weekends ago (the weekend of 29 April 2023)."),
    ],
)
def test_english(said: str, grounded: str) -> None:
    assert ground_dates(said, MONDAY_8_MAY_2023, "en") == grounded


def test_a_new_year_and_a_month_before_january() -> None:
    new_year = 1672574400.0  # 1 January 2023
    assert (
        ground_dates("last month and yesterday", new_year, "en")
        == "last month (December 2022) and yesterday (31 December 2022)"
    )


def test_chinese() -> None:
    assert ground_dates("我昨天去了，上个月也去了，去年没去。", MONDAY_8_MAY_2023, "zh") == (
        "我昨天（2023年5月7日）去了，上个月（2023年4月）也去了，去年（2022年）没去。"
    )


def grounded_on_read(text: str, ts: float, language: Language) -> str:
    """ground_dates as the read path ran it before dates were pinned at write time: every rule's re.sub in turn."""
    if not dates._CUES[language].search(text):
        return text
    today = datetime.fromtimestamp(ts, UTC).date()
    note = LOCALES[language].date_note
    for pattern, meaning in dates._RULES[language]:
        text = pattern.sub(lambda m, meaning=meaning: m.group(0) + note.format(date=meaning(m, today)), text)
    return text


_PHRASES = {
    "en": [
        "yesterday",
        "Last night",
        "today",
        "this morning",
        "tomorrow",
        "last Monday",
        "next friday",
        "this Sunday",
        "past weekend",
        "this weekend",
        "last week",
        "next week",
        "last month",
        "this month",
        "next month",
        "last year",
        "this year",
        "next year",
        "3 days ago",
        "a couple of weeks ago",
        "two months ago",
        "ten years ago",
        "the",
        "last",
        "this",
        "next",
        "ago",
        "weeks",
        "day",
        "I",
        "went",
        "(",
        ")",
        ",",
        ".",
        "\n",
        "```",
        "- ",
        "2023",
    ],
    "zh": [
        "前天",
        "昨天",
        "昨晚",
        "今天",
        "今晚",
        "明天",
        "后天",
        "上周",
        "上个星期",
        "下星期",
        "上个月",
        "下个月",
        "去年",
        "今年",
        "明年",
        "我",
        "去了",
        "上",
        "下",
        "前",
        "后",
        "，",
        "。",
        "代码",
        "\n",
        "2023年",
    ],
}


@settings(max_examples=400, deadline=None)
@given(
    data=st.data(), language=st.sampled_from(["en", "zh"]), ts=st.floats(0, 4_102_444_800, allow_nan=False)
)  # 1970 to 2100
def test_dates_pinned_once_read_as_the_read_path_grounded_them(
    data: st.DataObject, language: Language, ts: float
) -> None:
    words = data.draw(st.lists(st.sampled_from(_PHRASES[language]) | st.text(max_size=4), max_size=40))
    text = data.draw(st.sampled_from([" ", ""])).join(words)
    notes = dates.date_notes(text, ts, language)
    try:
        before = grounded_on_read(text, ts, language)
    except (OverflowError, ValueError):  # a date outside the calendar: the old read path raised, now it is left bare
        before = None
    if before is not None:
        assert dates.with_notes(text, notes) == before == ground_dates(text, ts, language)
    assert [at for at, _ in notes] == sorted({at for at, _ in notes}) and all(0 <= at <= len(text) for at, _ in notes)


def test_an_expression_beyond_the_calendar_keeps_its_words_and_gets_no_date() -> None:
    text = "I went 99999999 days ago and 40000 months ago, yesterday too."
    assert ground_dates(text, MONDAY_8_MAY_2023, "en") == (
        "I went 99999999 days ago and 40000 months ago, yesterday (7 May 2023) too."
    )


def test_a_text_without_relative_dates_has_no_notes() -> None:
    assert dates.date_notes("We met in Lisbon.", MONDAY_8_MAY_2023, "en") == ()
    assert dates.date_notes("I went yesterday.", MONDAY_8_MAY_2023, "en") == (
        (len("I went yesterday"), " (7 May 2023)"),
    )
