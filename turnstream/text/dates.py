"""Relative time words pinned to calendar dates (pure): "yesterday", said on 8 May 2023, is 7 May 2023.

A recalled turn is read long after it was said; "last week" in it would otherwise be read from the
reader's today. Each expression keeps its words and gains the date it meant, in brackets.
"""

from __future__ import annotations

import re
from datetime import date, datetime, timedelta, timezone
from typing import Callable, Literal

Language = Literal["zh", "en"]

_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_NUMBERS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
            "eight": 8, "nine": 9, "ten": 10, "a couple of": 2, "a few": 3}
_COUNT = r"(\d+|a couple of|a few|an?|one|two|three|four|five|six|seven|eight|nine|ten)"


def day_text(day: date, language: Language) -> str:
    return f"{day.year}年{day.month}月{day.day}日" if language == "zh" else f"{day.day} {day:%B} {day.year}"


def _month_text(year: int, month: int, language: Language) -> str:
    year, month = year + (month - 1) // 12, (month - 1) % 12 + 1
    return f"{year}年{month}月" if language == "zh" else f"{date(year, month, 1):%B} {year}"


def _english_rules(today: date) -> list[tuple[re.Pattern[str], Callable[[re.Match[str]], str]]]:
    def days(n: int) -> str:
        return day_text(today + timedelta(days=n), "en")

    def weekday(match: re.Match[str], direction: int) -> str:
        target = _WEEKDAYS.index(match.group(2).lower())
        delta = (today.weekday() - target) % 7 or 7
        return days(-delta if direction < 0 else (target - today.weekday()) % 7 or 7)

    def ago(match: re.Match[str]) -> str:
        n = int(match.group(1)) if match.group(1).isdigit() else _NUMBERS[match.group(1).lower()]
        unit = match.group(2).lower().rstrip("s")
        if unit == "day":
            return days(-n)
        if unit == "week":
            return f"the week of {days(-7 * n)}"
        if unit == "month":
            return _month_text(today.year, today.month - n, "en")
        return str(today.year - n)

    return [
        (re.compile(r"\b(yesterday|last night)\b", re.I), lambda m: days(-1)),
        (re.compile(r"\b(today|tonight|this morning|this afternoon|this evening)\b", re.I), lambda m: days(0)),
        (re.compile(r"\b(tomorrow)\b", re.I), lambda m: days(1)),
        (re.compile(r"\b(last|past) (" + "|".join(_WEEKDAYS) + r")\b", re.I), lambda m: weekday(m, -1)),
        (re.compile(r"\b(next|this) (" + "|".join(_WEEKDAYS) + r")\b", re.I), lambda m: weekday(m, 1)),
        (re.compile(r"\b(last|past) (weekend)\b", re.I), lambda m: f"the weekend before {days(0)}"),
        (re.compile(r"\b(this|next) (weekend)\b", re.I), lambda m: f"the weekend after {days(0)}"),
        (re.compile(r"\b(last|past) (week)\b", re.I), lambda m: f"the week before {days(0)}"),
        (re.compile(r"\b(next) (week)\b", re.I), lambda m: f"the week after {days(0)}"),
        (re.compile(r"\b(last|past) (month)\b", re.I), lambda m: _month_text(today.year, today.month - 1, "en")),
        (re.compile(r"\b(this) (month)\b", re.I), lambda m: _month_text(today.year, today.month, "en")),
        (re.compile(r"\b(next) (month)\b", re.I), lambda m: _month_text(today.year, today.month + 1, "en")),
        (re.compile(r"\b(last|past) (year)\b", re.I), lambda m: str(today.year - 1)),
        (re.compile(r"\b(this) (year)\b", re.I), lambda m: str(today.year)),
        (re.compile(r"\b(next) (year)\b", re.I), lambda m: str(today.year + 1)),
        (re.compile(rf"\b{_COUNT} (days?|weeks?|months?|years?) ago\b", re.I), ago),
    ]


def _chinese_rules(today: date) -> list[tuple[re.Pattern[str], Callable[[re.Match[str]], str]]]:
    def days(n: int) -> str:
        return day_text(today + timedelta(days=n), "zh")

    return [
        (re.compile(r"(前天)"), lambda m: days(-2)),
        (re.compile(r"(昨天|昨晚)"), lambda m: days(-1)),
        (re.compile(r"(今天|今晚)"), lambda m: days(0)),
        (re.compile(r"(明天)"), lambda m: days(1)),
        (re.compile(r"(后天)"), lambda m: days(2)),
        (re.compile(r"(上周|上个星期|上星期)"), lambda m: f"{days(0)}的前一周"),
        (re.compile(r"(下周|下个星期|下星期)"), lambda m: f"{days(0)}的后一周"),
        (re.compile(r"(上个月)"), lambda m: _month_text(today.year, today.month - 1, "zh")),
        (re.compile(r"(下个月)"), lambda m: _month_text(today.year, today.month + 1, "zh")),
        (re.compile(r"(去年)"), lambda m: f"{today.year - 1}年"),
        (re.compile(r"(今年)"), lambda m: f"{today.year}年"),
        (re.compile(r"(明年)"), lambda m: f"{today.year + 1}年"),
    ]


_CUES: dict[Language, re.Pattern[str]] = {
    "en": re.compile(r"\b(?:yesterday|last|past|today|tonight|this|tomorrow|next|ago)\b", re.I),
    "zh": re.compile(r"[昨今明前后去上下]"),
}
"""A word every rule needs: most lines have none, and then no rule runs."""


def ground_dates(text: str, ts: float, language: Language) -> str:
    """`text` with every relative time expression followed by the date it meant when said at `ts` (UTC)."""
    if not _CUES[language].search(text):
        return text
    today = datetime.fromtimestamp(ts, timezone.utc).date()
    rules = _chinese_rules(today) if language == "zh" else _english_rules(today)
    open_, close = ("（", "）") if language == "zh" else (" (", ")")
    for pattern, meaning in rules:
        text = pattern.sub(lambda m: f"{m.group(0)}{open_}{meaning(m)}{close}", text)
    return text
