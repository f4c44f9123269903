"""choose_turns: the best snippets within the room, a snippet too big for it giving its hit alone."""

from hypothesis import given
from hypothesis import strategies as st

from turnstream.prompt.recalled import LINE_SEPARATOR_TOKENS, MIN_CUT_TOOL_TOKENS, RecalledTurn, choose_turns
from turnstream.schemas.archive import ArchiveEntry
from turnstream.text.tokens import count_text

DAY = 1683554160.0  # 8 May 2023, 13:56 UTC


def entry(position: int, words: int, day: int = 0) -> ArchiveEntry:
    text = " ".join(f"word{position}x{n}" for n in range(words))
    return ArchiveEntry(f"e{position}", "s1", position, "user", "Ann", DAY + day * 86400, text)


def block_cost(turns: list[RecalledTurn]) -> int:
    """What the chosen lines and their day headings take, as choose_turns counts them."""
    days = {t.day for t in turns}
    return sum(count_text(t.line) + LINE_SEPARATOR_TOKENS for t in turns) + sum(
        count_text(day) + LINE_SEPARATOR_TOKENS for day in days
    )


def test_a_snippet_too_big_for_the_room_gives_its_hit_alone() -> None:
    hit, before, after = entry(10, 5), entry(9, 200), entry(11, 200)
    whole = choose_turns([(hit, 2.0), (before, 0.0), (after, 0.0)], set(), 10_000, "en")
    assert [t.entry.position for t in whole] == [9, 10, 11]
    room = block_cost([t for t in whole if t.hit])
    alone = choose_turns([(hit, 2.0), (before, 0.0), (after, 0.0)], set(), room, "en")
    assert [(t.entry.position, t.hit) for t in alone] == [(10, True)]
    assert choose_turns([(hit, 2.0), (before, 0.0), (after, 0.0)], set(), room - 1, "en") == []


def test_a_shown_hit_leaves_its_neighbours_out_when_they_do_not_fit() -> None:
    hit, after = entry(10, 5), entry(11, 200)
    assert choose_turns([(hit, 2.0), (after, 0.0)], {("s1", 10)}, 30, "en") == []


snippet = st.tuples(st.integers(1, 120), st.lists(st.integers(1, 120), max_size=3), st.integers(0, 3), st.booleans())


@given(st.lists(snippet, max_size=8), st.integers(0, 600))
def test_the_chosen_lines_fit_the_room_and_a_neighbour_comes_with_its_hit(
    snippets: list[tuple[int, list[int], int, bool]], room: int
) -> None:
    archived, shown, hit_of = [], set(), {}
    position = 0
    for n, (hit_words, neighbours, day, hit_shown) in enumerate(snippets):
        hit = entry(position, hit_words, day)
        archived.append((hit, float(len(snippets) - n)))
        if hit_shown:
            shown.add(("s1", position))
        for words in neighbours:
            position += 1
            archived.append((entry(position, words, day), 0.0))
            hit_of[f"e{position}"] = hit.id
        position += 1
    turns = choose_turns(archived, shown, room, "en")
    assert block_cost(turns) <= room
    ids = {t.entry.id for t in turns}
    assert all(hit_of[t.entry.id] in ids or ("s1", int(hit_of[t.entry.id][1:])) in shown for t in turns if not t.hit)
    assert not any(("s1", t.entry.position) in shown for t in turns)


RESULT = (
    '{"customer": {"id": "cust_88213", "payment_methods": [{"id": "voucher_5518230", "amount": 200, '
    '"currency": "USD"}, {"id": "card_9920117", "brand": "visa", "last4": "3311"}], '
    '"bookings": ["KX4Q2P", "ZR81LM"]}}'
)


def tool_result(position: int, result: str = RESULT, ts: float = DAY + 3 * 3600 + 7 * 60) -> ArchiveEntry:
    text = f'get_customer({{"customer_id": "cust_88213"}}) → {result}'
    return ArchiveEntry(f"e{position}", "s1", position, "tool", None, ts, text)


def test_a_tool_result_reads_whole_with_its_step_and_time() -> None:
    (turn,) = choose_turns([(tool_result(12), 3.0)], set(), 10_000, "en")
    assert turn.line == f'Tool (step 12, 17:03): get_customer({{"customer_id": "cust_88213"}}) → {RESULT}'
    (said,) = choose_turns([(tool_result(12), 3.0)], set(), 10_000, "zh")
    assert said.line.startswith("工具（第12步，17:03）: get_customer(") and said.line.endswith(RESULT)
    assert turn.day == "[8 May 2023]"


def test_a_tool_result_is_not_cut_as_filler() -> None:
    # a sentence of small talk in a result is data to the agent, not chat to leave out
    text = 'send_message({"to": "Ann"}) → Thanks, Ann! Delivered as msg_4471.'
    hits = [(ArchiveEntry("e1", "s1", 4, "tool", None, DAY, text), 2.0), (entry(5, 3), 0.0)]
    assert choose_turns(hits, set(), 10_000, "en")[0].line.endswith("→ Thanks, Ann! Delivered as msg_4471.")


def test_a_tool_result_too_long_for_the_room_gives_its_head_with_a_note_and_another_turn_nothing() -> None:
    long = tool_result(12, RESULT[:-2] + ', "history": [' + ", ".join(f'"TRIP-{n:04d}"' for n in range(300)) + "]}}")
    (whole,) = choose_turns([(long, 3.0)], set(), 10_000, "en")
    room = block_cost([whole]) // 3
    (cut,) = choose_turns([(long, 3.0)], set(), room, "en")
    assert cut.line.startswith(whole.line[:200]) and cut.line.endswith("tokens …]") and "trimmed" in cut.line
    assert block_cost([cut]) <= room and cut.entry.text == long.text  # the entry itself stays whole
    chat = ArchiveEntry("e7", "s1", 7, "user", "Ann", DAY, long.text)
    assert choose_turns([(chat, 3.0)], set(), room, "en") == []  # a chat turn too long is left out, as before
    assert choose_turns([(long, 3.0)], set(), MIN_CUT_TOOL_TOKENS, "en") == []  # too little of it would be left


@given(room=st.integers(0, 1500), language=st.sampled_from(["en", "zh"]))
def test_a_cut_tool_result_never_passes_the_room(room: int, language: str) -> None:
    long = tool_result(3, RESULT * 40)
    turns = choose_turns([(long, 3.0), (entry(4, 30), 0.0)], set(), room, language)  # type: ignore[arg-type]
    assert block_cost(turns) <= room
    if room >= 100:  # room for the result's head: the hit is given, cut to fit
        assert "e3" in [t.entry.id for t in turns]
