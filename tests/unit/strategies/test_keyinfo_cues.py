"""An amount of money with a limit on the same line is a budget, whether or not the word is said."""

import pytest

from turnstream.compaction.strategies.keyinfo import classify


@pytest.mark.parametrize(
    "text",
    ["Flights at most 900 euros each way", "Hotels up to $150 a night please", "jobs under 20k", "住宿300元以内", "the cap is ¥ 8000",
     "first line\nrooms no more than 120 eur"],
)
def test_money_with_a_limit_is_the_budget_slot(text: str) -> None:
    assert classify(text, "user") == ("constraint", "budget")


@pytest.mark.parametrize(
    "text",
    ["The museum costs 20 euros", "At most two stops", "at most\n300 euros", "300 euros\nat most"],
)
def test_money_or_a_limit_alone_or_on_other_lines_is_not(text: str) -> None:
    assert classify(text, "user") != ("constraint", "budget")
