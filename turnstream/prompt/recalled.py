"""Which archived turns a prompt gets and how they read: pure, no Redis.

The read script returns the best-matching turns (BM25 hits, best first), each followed by the turns
around it in its session. Here they are grouped back into snippets, those the context already shows
are dropped, the best snippets fill the room, and the chosen lines are laid out in time order under
one heading per day, each with its speaker, so a model can answer "when" and "who" from them (a date
written once per day instead of once per line leaves room for more lines). A line leaves out the turn's
sentences that say nothing ("Thanks, Mel!", "Wow, that's so inspiring!"): the room they took goes to
more lines. A tool result is data an agent reads again instead of calling the tool again: its line is the
result whole, with its step and time, and one too long for the room left is cut to it, with a note.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime
from functools import lru_cache

from typing_extensions import TypedDict  # pydantic reads typing's own TypedDict only on Python 3.12+

from turnstream.schemas.archive import ArchiveEntry
from turnstream.text.dates import day_text, ground_dates, with_notes
from turnstream.text.greeting import without_filler
from turnstream.text.language import Language
from turnstream.text.locale import LOCALES
from turnstream.text.tokens import count_text, truncate_text

LEXICAL_FIRST = 5
"""Lexical snippets laid before the semantic share: the words' best evidence, with its neighbours, comes first
(LoCoMo dev, 1,500- and 2,500-token blocks: 5 first beat one of each and 10 first, docs/decisions/0034)."""
LINE_SEPARATOR_TOKENS = 1
"""What a line break between two lines may add to their separate counts."""
MIN_CUT_TOOL_TOKENS = 48
"""The least a tool result cut to the room keeps, its heading and call included: less tells an agent nothing it
can act on, and the room goes to other lines."""

Line = tuple[ArchiveEntry, float, str, str]
"""A chosen turn as laid out: its entry, its hit's score, its day heading and its line."""


class ArchivedTurn(TypedDict):
    """An archived turn as a prompt or a search returns it (RecalledTurn.to_dict)."""

    id: str
    """The archive entry's id."""
    session: str
    """Session key of the conversation it was said in."""
    position: int
    """Its position in that conversation, from 0."""
    ts: float
    """When it was said, epoch seconds."""
    speaker: str | None
    """The speaker's name when the turn gave one."""
    role: str
    """The chat role: user or assistant."""
    text: str
    """What was said."""
    score: float
    """The BM25 score of the hit it came with."""
    hit: bool
    """True for the matching turn itself, False for a neighbour shown around it."""
    line: str
    """The line as the memory block shows it: `[day] speaker: text`."""


@dataclass(frozen=True, slots=True)
class RecalledTurn:
    """An archived turn chosen for a prompt."""

    entry: ArchiveEntry
    score: float
    """The BM25 score of its snippet's hit (the best-matching turn it came with)."""
    hit: bool
    """True for the matching turn itself, False for a turn around it."""
    line: str
    """What the turn said, with its speaker (turn_line); its day is the heading above it."""
    day: str
    """The day heading the line goes under (day_heading)."""

    def to_dict(self) -> ArchivedTurn:
        e = self.entry
        return {
            "id": e.id,
            "session": e.session,
            "position": e.position,
            "ts": e.ts,
            "speaker": e.speaker,
            "role": e.role,
            "text": e.text,
            "score": round(self.score, 4),
            "hit": self.hit,
            "line": f"{self.day} {self.line}",
        }


def day_heading(entry: ArchiveEntry, language: Language) -> str:
    """`[8 May 2023]`: the day the turn was said."""
    return _heading(datetime.fromtimestamp(entry.ts, UTC).date(), language)


@lru_cache(maxsize=1024)
def _heading(day: date, language: Language) -> str:
    # a prompt's candidates come from a few days: each heading is written once, not once per candidate
    return f"[{day_text(day, language)}]"


def turn_line(entry: ArchiveEntry, language: Language, names: frozenset[str] | None = None) -> str:
    """`Caroline: I went there yesterday (7 May 2023).`: attributed, relative dates pinned to the day it was said;
    with `names` (the lower-cased speakers around it), less its filler sentences (greeting.is_filler).

    A tool result's line is `Tool (step 12, 14:03): search_flights({...}) → {...}`: its step and time say which
    call it answered, and which of two results about the same thing is the newer; its data is never filler."""
    locale = LOCALES[language]
    speaker = entry.speaker or locale.speakers.get(entry.role, entry.role)
    # an entry archived before dates were pinned at write time is grounded here, as every entry once was
    text = ground_dates(entry.text, entry.ts, language) if entry.dates is None else with_notes(entry.text, entry.dates)
    if entry.role == "tool":
        said = datetime.fromtimestamp(entry.ts, UTC)
        return f"{locale.tool_turn.format(speaker=speaker, step=entry.position, time=f'{said:%H:%M}')}: {text}"
    return f"{speaker}: {text if names is None else without_filler(text, names)}"


def recall_line(entry: ArchiveEntry, language: Language) -> str:
    """`[8 May 2023] Caroline: I went there yesterday (7 May 2023).`: a turn on its own line, dated."""
    return f"{day_heading(entry, language)} {turn_line(entry, language)}"


def dated_lines(lines: Iterable[tuple[str, str]]) -> list[str]:
    """(day heading, line) pairs in time order as text lines: a heading line wherever the day changes."""
    out: list[str] = []
    last = None
    for day, line in lines:
        if day != last:
            out.append(day)
            last = day
        out.append(line)
    return out


def snippets(archived: Iterable[tuple[ArchiveEntry, float]]) -> list[list[tuple[ArchiveEntry, float]]]:
    """Hits with the neighbours that follow them in the script's reply (a neighbour's score is 0)."""
    groups: list[list[tuple[ArchiveEntry, float]]] = []
    for entry, score in archived:
        if score > 0 or not groups:
            groups.append([(entry, score)])
        else:
            groups[-1].append((entry, score))
    return groups


def choose_turns(
    archived: Iterable[tuple[ArchiveEntry, float]],
    shown: set[tuple[str, int]],
    room: int,
    language: Language,
    shown_texts: frozenset[str] = frozenset(),
    semantic: Sequence[tuple[ArchiveEntry, float]] = (),
) -> list[RecalledTurn]:
    """The best snippets whose lines fit in `room` tokens, in time order, minus the turns the context shows:
    `shown` (session, position) pairs, and any turn whose text equals a message in `shown_texts`.
    A snippet that does not fit whole may still give its hit alone, and a tool result hit too long for the room
    left its head, cut to it (cut_tool_line).

    `semantic`, the semantic share's hits best first, takes a fixed place: after the LEXICAL_FIRST best lexical
    snippets, each hit alone, then the other lexical snippets; neither side's scores are compared with the
    other's (docs/decisions/0034)."""
    chosen: dict[str, RecalledTurn] = {}
    days: set[str] = set()
    archived = list(archived)
    names = frozenset(e.speaker.lower() for e, _ in [*archived, *semantic] if e.speaker)
    lexical = snippets(archived)
    groups = [*lexical[:LEXICAL_FIRST], *([hit] for hit in semantic), *lexical[LEXICAL_FIRST:]] if semantic else lexical
    for group in groups:
        best = group[0][1]
        fresh = [
            (e, s)
            for e, s in group
            if e.id not in chosen and (e.session, e.position) not in shown and e.text not in shown_texts
        ]
        lines, costs = _lines_within(fresh, days, room, language, names)
        cost = sum(costs)
        if cost > room:  # the hit alone, when it is still fresh: a group's hit comes first, its cost counted alone
            kept = 1 if lines and lines[0][1] > 0 else 0
            lines, cost = lines[:kept], sum(costs[:kept])
            if cost > room:
                cut = cut_tool_line(*lines[0], costs[0], room, language) if lines else None
                if cut is None:
                    continue
                lines, cost = [cut[0]], cut[1]
        for entry, score, day, line in lines:
            chosen[entry.id] = RecalledTurn(entry, best, score > 0, line, day)
            days.add(day)
        room -= cost
    return sorted(chosen.values(), key=lambda t: (t.entry.ts, t.entry.session, t.entry.position))


def cut_tool_line(
    entry: ArchiveEntry, score: float, day: str, line: str, cost: int, room: int, language: Language
) -> tuple[Line, int] | None:
    """A tool result's `line` (costing `cost` with its separator and heading) cut, with a note of the tokens
    left out, to fit `room`, and its new cost; None for another turn, or when less than MIN_CUT_TOOL_TOKENS of
    it would be left."""
    if entry.role != "tool":
        return None
    note = LOCALES[language].trim_note
    counted = count_text(line)
    extra = cost - counted  # its separator, and its day's heading when the day is new
    keep = room - extra - count_text(f" {note.format(tokens=counted)}")
    while keep >= MIN_CUT_TOOL_TOKENS:
        cut = truncate_text(line, keep).rstrip("\ufffd")  # a cut inside a multi-token character leaves half of it
        text = f"{cut} {note.format(tokens=max(counted - count_text(cut), 0))}"
        cut_cost = count_text(text) + extra
        if cut_cost <= room:
            return (entry, score, day, text), cut_cost
        keep -= cut_cost - room
    return None


def _lines_within(
    entries: list[tuple[ArchiveEntry, float]], days: set[str], room: int, language: Language, names: frozenset[str]
) -> tuple[list[Line], list[int]]:
    """The lines of `entries` with the tokens each adds to the block (the line, and the heading of its day when
    neither `days` nor an earlier line has it), written only until together they pass `room`: a snippet that
    cannot fit is not written out whole, and a long chat's candidates are most of a read's work."""
    lines: list[Line] = []
    costs: list[int] = []
    total = 0
    new_days: set[str] = set()
    for entry, score in entries:
        day, line = day_heading(entry, language), turn_line(entry, language, names)
        cost = count_text(line) + LINE_SEPARATOR_TOKENS
        if day not in days and day not in new_days:
            new_days.add(day)
            cost += count_text(day) + LINE_SEPARATOR_TOKENS
        lines.append((entry, score, day, line))
        costs.append(cost)
        total += cost
        if total > room:
            break
    return lines, costs
