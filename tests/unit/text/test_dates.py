import pytest

from turnstream.text.dates import ground_dates


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
    ],
)
def test_english(said: str, grounded: str) -> None:
    assert ground_dates(said, MONDAY_8_MAY_2023, "en") == grounded


def test_a_new_year_and_a_month_before_january() -> None:
    new_year = 1672574400.0  # 1 January 2023
    assert ground_dates("last month and yesterday", new_year, "en") == "last month (December 2022) and yesterday (31 December 2022)"


def test_chinese() -> None:
    assert ground_dates("我昨天去了，上个月也去了，去年没去。", MONDAY_8_MAY_2023, "zh") == (
        "我昨天（2023年5月7日）去了，上个月（2023年4月）也去了，去年（2022年）没去。"
    )
