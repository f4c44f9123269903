"""Relative time words pinned to calendar dates (pure): "yesterday", said on 8 May 2023, is 7 May 2023.

A recalled turn is read long after it was said; "last week" in it would otherwise be read from the
reader's today. Each expression keeps its words and gains the date it meant, in brackets.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import UTC, date, datetime, timedelta

from turnstream.text.language import Language
from turnstream.text.locale import LOCALES

_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_NUMBERS = {
    "a": 1,
    "an": 1,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "a couple of": 2,
    "a few": 3,
}
_COUNT = r"(\d+|a couple of|a few|an?|one|two|three|four|five|six|seven|eight|nine|ten)"


def day_text(day: date, language: Language) -> str:
    return LOCALES[language].day_text(day)


def _month_text(year: int, month: int, language: Language) -> str:
    return LOCALES[language].month_text(year, month)


Rule = tuple[re.Pattern[str], Callable[[re.Match[str], date], str]]


def _days(today: date, n: int, language: Language = "en") -> str:
    return day_text(today + timedelta(days=n), language)


def _weekday_offset(direction: str, target: int, today: date) -> int:
    """Days from `today` to weekday `target` before it ("last") or after it ("next", "this"), never 0."""
    if direction.lower() in ("last", "past"):
        return -((today.weekday() - target) % 7 or 7)
    return (target - today.weekday()) % 7 or 7


def _weekday(match: re.Match[str], today: date) -> str:
    """The named weekday before ("last") or after ("next", "this") `today`, never `today` itself."""
    return _days(today, _weekday_offset(match.group(1), _WEEKDAYS.index(match.group(2).lower()), today))


def _weekday_abbreviated(match: re.Match[str], today: date) -> str:
    """ "last Fri": the day with the weekday's whole name ("Friday, 14 July 2023"), the word a reader asking
    "which Friday" looks for."""
    target = next(i for i, day in enumerate(_WEEKDAYS) if day.startswith(match.group(2).lower()[:3]))
    return f"{_WEEKDAYS[target].title()}, {_days(today, _weekday_offset(match.group(1), target, today))}"


def _ago(match: re.Match[str], today: date) -> str:
    n = int(match.group(1)) if match.group(1).isdigit() else _NUMBERS[match.group(1).lower()]
    unit = match.group(2).lower().rstrip("s")
    if unit == "weekend":
        # the Saturday of the weekend n before this one
        return f"the weekend of {_days(today, _weekday_offset('last', 5, today) - 7 * (n - 1))}"
    if unit == "day":
        return _days(today, -n)
    if unit == "week":
        return f"the week of {_days(today, -7 * n)}"
    if unit == "month":
        return _month_text(today.year, today.month - n, "en")
    return str(today.year - n)


def _en(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.I)


_ENGLISH: list[Rule] = [
    (_en(r"\b(yesterday|last night)\b"), lambda m, t: _days(t, -1)),
    (_en(r"\b(today|tonight|this morning|this afternoon|this evening)\b"), lambda m, t: _days(t, 0)),
    (_en(r"\b(tomorrow)\b"), lambda m, t: _days(t, 1)),
    (_en(r"\b(last|past|next|this) (" + "|".join(_WEEKDAYS) + r")\b"), _weekday),
    # "last Fri", "next Tues"; "sat", "sun" and "wed" are verbs and nouns in lower case ("who last sat there")
    (re.compile(r"\b((?i:last|past|next)) ((?i:mon|tues?|thu(?:rs?)?|fri)|Wed|Sat|Sun)\b"), _weekday_abbreviated),
    (_en(r"\b(last|past) (weekend)\b"), lambda m, t: f"the weekend before {_days(t, 0)}"),
    (_en(r"\b(this|next) (weekend)\b"), lambda m, t: f"the weekend after {_days(t, 0)}"),
    (_en(r"\b(last|past) (week)\b"), lambda m, t: f"the week before {_days(t, 0)}"),
    (_en(r"\b(next) (week)\b"), lambda m, t: f"the week after {_days(t, 0)}"),
    (_en(r"\b(last|past) (month)\b"), lambda m, t: _month_text(t.year, t.month - 1, "en")),
    (_en(r"\b(this) (month)\b"), lambda m, t: _month_text(t.year, t.month, "en")),
    (_en(r"\b(next) (month)\b"), lambda m, t: _month_text(t.year, t.month + 1, "en")),
    (_en(r"\b(last|past) (year)\b"), lambda m, t: str(t.year - 1)),
    (_en(r"\b(this) (year)\b"), lambda m, t: str(t.year)),
    (_en(r"\b(next) (year)\b"), lambda m, t: str(t.year + 1)),
    (_en(rf"\b{_COUNT} (days?|weeks?|weekends?|months?|years?) ago\b"), _ago),
]

_CHINESE: list[Rule] = [
    (re.compile(r"前天"), lambda m, t: _days(t, -2, "zh")),
    (re.compile(r"昨天|昨晚"), lambda m, t: _days(t, -1, "zh")),
    (re.compile(r"今天|今晚"), lambda m, t: _days(t, 0, "zh")),
    (re.compile(r"明天"), lambda m, t: _days(t, 1, "zh")),
    (re.compile(r"后天"), lambda m, t: _days(t, 2, "zh")),
    (re.compile(r"上周|上个星期|上星期"), lambda m, t: f"{_days(t, 0, 'zh')}的前一周"),
    (re.compile(r"下周|下个星期|下星期"), lambda m, t: f"{_days(t, 0, 'zh')}的后一周"),
    (re.compile(r"上个月"), lambda m, t: _month_text(t.year, t.month - 1, "zh")),
    (re.compile(r"下个月"), lambda m, t: _month_text(t.year, t.month + 1, "zh")),
    (re.compile(r"去年"), lambda m, t: f"{t.year - 1}年"),
    (re.compile(r"今年"), lambda m, t: f"{t.year}年"),
    (re.compile(r"明年"), lambda m, t: f"{t.year + 1}年"),
]
_RULES: dict[Language, list[Rule]] = {"en": _ENGLISH, "zh": _CHINESE}


_ENGLISH_CUES = ("yesterday", "last", "past", "today", "tonight", "this", "tomorrow", "next", "ago")
_CUES: dict[Language, re.Pattern[str]] = {
    # their first letters checked first: the words' alternatives are then tried at few positions of a turn
    "en": re.compile(
        rf"\b(?=[{''.join(sorted({cue[0] for cue in _ENGLISH_CUES}))}])(?:{'|'.join(_ENGLISH_CUES)})\b", re.I
    ),
    "zh": re.compile(r"[昨今明前后去上下]"),
}
"""A word every rule needs: most lines have none, and then no rule runs."""


Notes = tuple[tuple[int, str], ...]
"""Where a text's dates go: (offset in the text, what is inserted there) pairs, offsets rising."""


def _meant(meaning: Callable[[re.Match[str], date], str], match: re.Match[str], today: date) -> str | None:
    """The date `match` meant, or None when it falls outside the calendar ("99999999 days ago"): such a turn is
    archived with its words as said, not refused."""
    try:
        return meaning(match, today)
    except (OverflowError, ValueError):
        return None


def date_notes(text: str, ts: float, language: Language) -> Notes:
    """The notes `ground_dates` inserts into `text` said at `ts` (UTC): what an archived turn keeps, so a read
    pins its dates with no regex."""
    if not _CUES[language].search(text):
        return ()
    today = datetime.fromtimestamp(ts, UTC).date()
    note = LOCALES[language].date_note
    inserted = [False] * len(text)  # per character of `text` as it grows: True where a note put it
    for pattern, meaning in _RULES[language]:
        matches = list(pattern.finditer(text))
        if not matches:
            continue
        pieces: list[str] = []
        marks: list[bool] = []
        last = 0
        for match in matches:  # re.sub's own scan: the same matches, left to right, none overlapping
            meant = _meant(meaning, match, today)
            added = "" if meant is None else note.format(date=meant)
            pieces += [text[last : match.end()], added]
            marks += inserted[last : match.end()] + [True] * len(added)
            last = match.end()
        text, inserted = "".join([*pieces, text[last:]]), marks + inserted[last:]
    return _runs(text, inserted)


def _runs(text: str, inserted: list[bool]) -> Notes:
    """Each run of inserted characters of `text`, at its offset among the others: found by list searches, not a
    step a character (a turn's text may be thousands of them)."""
    notes: list[tuple[int, str]] = []
    start, before = 0, 0  # `before`: inserted characters ahead of `start`
    while True:
        try:
            start = inserted.index(True, start)
        except ValueError:
            return tuple(notes)
        try:
            end = inserted.index(False, start)
        except ValueError:
            end = len(inserted)
        notes.append((start - before, text[start:end]))
        before += end - start
        start = end


def with_notes(text: str, notes: Notes) -> str:
    """`text` with `notes` inserted: what ground_dates makes of it, without its regexes."""
    if not notes:
        return text
    pieces: list[str] = []
    last = 0
    for at, added in notes:
        pieces += [text[last:at], added]
        last = at
    pieces.append(text[last:])
    return "".join(pieces)


def ground_dates(text: str, ts: float, language: Language) -> str:
    """`text` with every relative time expression followed by the date it meant when said at `ts` (UTC)."""
    return with_notes(text, date_notes(text, ts, language))
