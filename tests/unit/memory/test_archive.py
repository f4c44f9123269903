import orjson
from hypothesis import given
from hypothesis import strategies as st

from turnstream.memory.archive import TOOL_RESULT_CHARS, archive_entry, archive_text
from turnstream.prompt.recalled import (
    LINE_SEPARATOR_TOKENS,
    choose_turns,
    dated_lines,
    day_heading,
    snippets,
    turn_line,
)
from turnstream.redis.recall import decode_recall
from turnstream.schemas.archive import MAX_DISTINCT_TERMS, MAX_IDENTIFIER_TERMS, ArchiveEntry, entry_id
from turnstream.text.terms import is_identifier
from turnstream.text.tokens import count_text

CALL_1 = {"id": "c1", "type": "function", "function": {"name": "search_hotels", "arguments": '{"city": "Lisbon"}'}}
CALL = {
    "role": "assistant",
    "content": "Let me look.",
    "tool_calls": [
        CALL_1,
        {"id": "c2", "type": "function", "function": {"name": "weather", "arguments": '{"city": "Porto"}'}},
    ],
}


def test_a_turn_is_one_entry_whatever_its_delivery() -> None:
    assert entry_id("s1", "t1") == entry_id("s1", "t1") != entry_id("s1", "t2") != entry_id("s2", "t1")


def test_a_tool_result_is_found_by_the_call_it_answers_and_kept_whole() -> None:
    data = {"forecast": [{"day": n, "sky": "sunny", "celsius": 20 + n} for n in range(40)], "station": "OPO-4471"}
    pretty = orjson.dumps(data, option=orjson.OPT_INDENT_2).decode()
    text = archive_text({"role": "tool", "tool_call_id": "c2", "content": pretty}, CALL)
    # on one line, every value of it: an agent reads it again instead of calling the tool again
    assert text == f'weather({{"city": "Porto"}}) → {" ".join(pretty.split())}' and len(pretty) > 2000
    huge = archive_text({"role": "tool", "tool_call_id": "c2", "content": "x " * TOOL_RESULT_CHARS}, CALL)
    assert len(huge) == len('weather({"city": "Porto"}) → ') + TOOL_RESULT_CHARS and huge.endswith("…")
    assert archive_text(CALL) == 'Let me look. → search_hotels({"city": "Lisbon"}) → weather({"city": "Porto"})'


def test_system_messages_and_empty_turns_are_not_archived() -> None:
    assert archive_entry("s1", "t0", 0, {"role": "system", "content": "Be brief."}, 0.0) is None
    assert archive_entry("s1", "t1", 1, {"role": "user", "content": ""}, 0.0) is None
    named = archive_entry("s1", "t2", 2, {"role": "user", "name": "Caroline", "content": "Hi Mel"}, 5.0)
    assert named == ArchiveEntry(entry_id("s1", "t2"), "s1", 2, "user", "Caroline", 5.0, "Hi Mel")


def test_the_speaker_is_indexed_and_long_turns_keep_their_most_frequent_terms() -> None:
    entry = ArchiveEntry("e", "s1", 0, "user", "Caroline", 0.0, "I adopted a dog")
    assert set(entry.term_counts()) == {"carolin", "adopt", "dog"}
    words = [f"word{chr(97 + n // 26)}{chr(97 + n % 26)}" for n in range(300)]  # no digit: no identifier
    long = ArchiveEntry("e", "s1", 0, "user", None, 0.0, " ".join(f"{w} " * (n % 3 + 1) for n, w in enumerate(words)))
    assert len(long.term_counts()) == MAX_DISTINCT_TERMS and long.term_counts()["wordac"] == 3


def test_a_long_tool_result_keeps_every_identifier_besides_its_most_frequent_words() -> None:
    """A search result listing many records is found by any record's id, however often its words recur."""
    records = [
        f'{{"hotel": "H-{n:04d}", "room": "standard double city view", "rate": "{100 + n} EUR"}}' for n in range(80)
    ]
    result = {"role": "tool", "tool_call_id": "c1", "content": "[" + ", ".join(records) + "]"}
    entry = archive_entry("s1", "t1", 3, result, 0.0, {**CALL, "tool_calls": [{**CALL_1, "id": "c1"}]})
    assert entry is not None
    counts = entry.term_counts()
    assert {f"h-{n:04d}" for n in range(80)} <= set(counts)
    assert len([t for t in counts if not is_identifier(t)]) == MAX_DISTINCT_TERMS and counts["room"] == 80
    many = " ".join(f"id_{n}x" for n in range(MAX_IDENTIFIER_TERMS + 40))
    assert (
        len(ArchiveEntry("e", "s1", 0, "tool", None, 0.0, many).term_counts())
        <= MAX_DISTINCT_TERMS + MAX_IDENTIFIER_TERMS
    )


def test_stored_form_round_trips() -> None:
    entry = ArchiveEntry("e", "acme:s1", 7, "assistant", None, 1.5, "Tram 28")
    assert ArchiveEntry.from_json(entry.to_json()) == entry


MAY_8_2023 = 1683554160.0


def entry(position: int, text: str = "words", session: str = "s1") -> ArchiveEntry:
    return ArchiveEntry(f"{session}-{position}", session, position, "user", None, 1683554160.0 + position, text)


def test_snippets_keep_neighbours_with_their_hit() -> None:
    archived = [(entry(5), 3.0), (entry(4), 0.0), (entry(6), 0.0), (entry(20), 1.0), (entry(21), 0.0)]
    assert [[e.position for e, _ in group] for group in snippets(archived)] == [[5, 4, 6], [20, 21]]


def test_choose_turns_fills_the_room_best_first_and_lays_out_in_time() -> None:
    archived = [(entry(20, "strong " * 30), 5.0), (entry(21, "its answer " * 30), 0.0), (entry(3, "weak " * 30), 1.0)]
    # both turns were said the same day: one heading for the two lines
    one_snippet = (
        sum(count_text(turn_line(e, "en")) + LINE_SEPARATOR_TOKENS for e, _ in archived[:2])
        + count_text(day_heading(archived[0][0], "en"))
        + LINE_SEPARATOR_TOKENS
    )
    turns = choose_turns(archived, set(), one_snippet, "en")
    assert [t.entry.position for t in turns] == [20, 21] and [t.hit for t in turns] == [True, False]
    assert [t.entry.position for t in choose_turns(archived, set(), 10_000, "en")] == [3, 20, 21]
    # no room for the whole snippet: the hit alone
    assert [t.entry.position for t in choose_turns(archived[:2], set(), one_snippet - 1, "en")] == [20]
    # a shown turn is never repeated
    assert [t.entry.position for t in choose_turns(archived, {("s1", 21)}, 10_000, "en")] == [3, 20]


def test_a_day_heading_costs_room_once() -> None:
    day = 86400.0
    same = [(ArchiveEntry(f"e{n}", "s1", n * 10, "user", None, 1683554160.0 + n, "alike " * 20), 1.0) for n in range(3)]
    apart = [
        (ArchiveEntry(f"e{n}", "s1", n * 10, "user", None, 1683554160.0 + n * day, "alike " * 20), 1.0)
        for n in range(3)
    ]
    line = count_text(turn_line(same[0][0], "en")) + LINE_SEPARATOR_TOKENS
    heading = count_text(day_heading(same[0][0], "en")) + LINE_SEPARATOR_TOKENS
    room = 3 * line + heading
    assert len(choose_turns(same, set(), room, "en")) == 3
    assert len(choose_turns(apart, set(), room, "en")) == 2  # each new day pays for its heading


def test_recalled_lines_leave_out_what_says_nothing_and_the_room_it_took() -> None:
    said = [
        (ArchiveEntry("e1", "s1", 4, "user", "Caroline", MAY_8_2023, "I adopted a dog. Thanks, Mel!"), 2.0),
        (
            ArchiveEntry(
                "e2", "s1", 5, "assistant", "Melanie", MAY_8_2023, "Wow, Caroline, that's so inspiring! What breed?"
            ),
            0.0,
        ),
    ]
    turns = choose_turns(said, set(), 10_000, "en")
    assert [t.line for t in turns] == ["Caroline: I adopted a dog.", "Melanie: What breed?"]
    assert [t.entry.text for t in turns] == [e.text for e, _ in said]  # the entries themselves are whole
    # the room counted is the lines' as written in the block
    room = (
        sum(count_text(t.line) + LINE_SEPARATOR_TOKENS for t in turns)
        + count_text(turns[0].day)
        + LINE_SEPARATOR_TOKENS
    )
    assert len(choose_turns(said, set(), room, "en")) == 2


@given(
    st.lists(
        st.tuples(st.sampled_from(["[1 May]", "[2 May]", "[3 May]"]), st.text(min_size=1, max_size=5)), max_size=20
    )
)
def test_dated_lines_head_each_run_of_a_day(pairs: list[tuple[str, str]]) -> None:
    pairs.sort(key=lambda pair: pair[0])
    out = dated_lines(pairs)
    days = list(dict.fromkeys(day for day, _ in pairs))
    assert [line for line in out if line in days] == days  # one heading per day, in order
    assert [line for line in out if line not in days] == [line for _, line in pairs if line not in days]
    assert len(out) == len(pairs) + len(days)


@given(
    text=st.sampled_from(
        [
            "I went yesterday, and next week again.",
            "Nothing relative.",
            "我昨天去了，下个月再去。",
            "This morning the deploy broke; last Monday too.",
        ]
    ),
    language=st.sampled_from(["en", "zh"]),
    ts=st.floats(0, 4_102_444_800),
)
def test_dates_pinned_at_archive_time_read_as_the_read_path_grounded_them(text: str, language: str, ts: float) -> None:
    message = {"role": "user", "name": "Caroline", "content": text}
    pinned = archive_entry("s1", "t1", 1, message, ts, language=language)  # type: ignore[arg-type]
    before = archive_entry("s1", "t1", 1, message, ts)  # as entries were archived before dates were pinned
    assert pinned is not None and before is not None and before.dates is None and pinned.dates is not None
    assert turn_line(pinned, language) == turn_line(before, language)  # type: ignore[arg-type]
    assert pinned.text == before.text and pinned.term_counts() == before.term_counts()  # indexed and matched as before
    assert ArchiveEntry.from_json(pinned.to_json()) == pinned


def test_an_entry_archived_before_dates_were_pinned_reads_grounded_in_the_prompts_language() -> None:
    old = orjson.dumps(
        {
            "id": "e",
            "session": "s1",
            "position": 3,
            "role": "user",
            "speaker": "Caroline",
            "ts": MAY_8_2023,
            "text": "I went yesterday.",
        }
    )
    entry = ArchiveEntry.from_json(old)
    assert entry.dates is None and entry.to_json() == old
    assert turn_line(entry, "en") == "Caroline: I went yesterday (7 May 2023)."


def test_a_pinned_entry_reads_its_notes_not_its_text_again() -> None:
    entry = archive_entry("s1", "t1", 1, {"role": "user", "content": "I went yesterday."}, MAY_8_2023, language="en")
    assert entry is not None and entry.dates == ((len("I went yesterday"), " (7 May 2023)"),)
    assert turn_line(entry, "zh") == "用户: I went yesterday (7 May 2023)."  # pinned when said, whoever reads it


def test_the_read_scripts_reply_keeps_each_entrys_pinned_dates_or_their_absence() -> None:
    pinned = archive_entry("s1", "t1", 1, {"role": "user", "content": "See you tomorrow."}, MAY_8_2023, language="en")
    old = archive_entry("s1", "t2", 2, {"role": "user", "content": "See you tomorrow."}, MAY_8_2023)
    assert pinned is not None and old is not None
    archived = (
        b"[" + b",".join(b"[%s,%s]" % (score, e.to_json()) for score, e in ((b"1.5", pinned), (b"0", old))) + b"]"
    )
    result = decode_recall([None, b"", 0, [], archived, b"[]", []])
    assert result.archived == [(pinned, 1.5), (old, 0.0)]
    assert hash(result.archived[0][0]) == hash(pinned)  # a frozen record still, its notes tuples
