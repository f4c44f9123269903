import importlib
import time
from typing import Any

import pytest

from turnstream.compaction.compactor import compact
from turnstream.compaction.marker import MARKERS, marker_message
from turnstream.compaction.strategies.offline import build_strategy
from turnstream.prompt.assemble import assemble
from turnstream.prompt.block import without_lines
from turnstream.prompt.context import split_context
from turnstream.prompt.read import Recalled
from turnstream.schemas.archive import ArchiveEntry
from turnstream.schemas.context import ContextDoc
from turnstream.settings import Settings
from turnstream.text.tokens import count_messages

SYSTEM = {"role": "system", "content": "You are a travel agent."}
FIRST = {"role": "user", "content": "Plan a trip to Lisbon."}
BLOCK = {"role": "system", "content": "[Summary of the compressed history]\nThe user wants Lisbon."}
MAY_8_2023 = 1683554160.0


def doc(
    messages: list[dict[str, Any]],
    marker_index: int | None = None,
    summary: str = "",
    positions: list[int | None] | None = None,
) -> ContextDoc:
    return ContextDoc(
        session_id="s1",
        version=1,
        last_turn_id="t1",
        updated_at=time.time(),
        messages=messages,
        positions=positions or [],
        marker_index=marker_index,
        summary=summary,
        tokens={"before": 0, "after": 0, "budget": 100},
    )


def memory(n: int, text: str = "", type_: str = "fact") -> Recalled:
    return Recalled(f"id{n}", type_, text or f"memory {n}", 1.0 - n / 10, 1)


def limits(prompt: int = 6000, recall: int = 2000, profile_chars: int = 500) -> Settings:
    # model_copy skips validation: these tests go below the smallest budget a user may configure
    return Settings().model_copy(
        update={"prompt_budget_tokens": prompt, "recall_budget_tokens": recall, "profile_read_chars": profile_chars}
    )


def entry(
    position: int, text: str, session: str = "s1", speaker: str | None = "Caroline", ts: float = MAY_8_2023
) -> ArchiveEntry:
    return ArchiveEntry(f"e{session}{position}", session, position, "user", speaker, ts, text)


def messages_of(
    prompt_doc: ContextDoc | None,
    profile: str,
    recalled: list[Recalled],
    question: str,
    settings: Settings,
    archived: list[tuple[ArchiveEntry, float]] = (),
) -> list[dict[str, Any]]:
    return assemble(prompt_doc, profile, recalled, list(archived), question, settings).messages


def test_compacted_context_splits_after_marker_and_summary() -> None:
    tail = [{"role": "assistant", "content": "Here are flights."}, {"role": "user", "content": "Cheaper ones?"}]
    compacted = doc(
        [SYSTEM, FIRST, marker_message("en"), BLOCK, *tail], 2, "The user wants Lisbon.", [0, 1, None, None, 7, 8]
    )
    context = split_context(compacted, "And hotels?")
    assert context.head == [SYSTEM, FIRST, marker_message("en"), BLOCK] and context.rest == tail
    assert context.positions == [7, 8] and context.shown == {("s1", 0), ("s1", 1)} and context.compacted


def test_uncompacted_context_splits_after_the_first_user_message() -> None:
    greeting = {"role": "assistant", "content": "Welcome!"}
    later = [{"role": "assistant", "content": "Sure."}, {"role": "user", "content": "More?"}]
    context = split_context(doc([SYSTEM, greeting, FIRST, *later]), "x")
    assert (context.head, context.rest) == ([SYSTEM, greeting, FIRST], later)
    assert (split_context(doc([SYSTEM]), "x").head, split_context(doc([SYSTEM]), "x").rest) == ([SYSTEM], [])
    assert (split_context(None, "x").head, split_context(None, "x").rest) == ([], [])


def test_the_new_user_message_is_not_repeated_when_already_applied() -> None:
    context = split_context(
        doc([SYSTEM, FIRST, {"role": "assistant", "content": "ok"}, {"role": "user", "content": "And hotels?"}]),
        "And hotels?",
    )
    assert context.head == [SYSTEM, FIRST] and context.rest == [{"role": "assistant", "content": "ok"}]


def test_order_is_head_memory_block_rest_user() -> None:
    tail = [{"role": "assistant", "content": "Here are flights."}]
    compacted = doc([SYSTEM, FIRST, marker_message("en"), BLOCK, *tail], marker_index=2, summary="x")
    result = assemble(
        compacted, "My name is Ana", [memory(1, "I love window seats", "preference")], [], "Seats?", limits()
    )
    messages = result.messages
    assert messages[:4] == [SYSTEM, FIRST, marker_message("en"), BLOCK]
    assert messages[4]["role"] == "system"
    assert (
        "Profile:\nMy name is Ana" in messages[4]["content"]
        and "- (preference) I love window seats" in messages[4]["content"]
    )
    assert messages[5:] == [*tail, {"role": "user", "content": "Seats?"}]
    assert [m.id for m in result.recalled] == ["id1"]


def test_block_speaks_the_conversation_language() -> None:
    chat = doc([{"role": "user", "content": "我们去上海旅游吧"}])
    archived = [(entry(5, "我对花生过敏", speaker=None), 2.0)]
    messages = messages_of(
        chat, "我叫小林", [memory(1, "我喜欢靠窗的座位", "preference")], "帮我订酒店", limits(), archived
    )
    assert messages[1]["content"].splitlines()[1:] == [
        "用户画像：",
        "我叫小林",
        "相关记忆：",
        "- （偏好）我喜欢靠窗的座位",
        "以往对话摘录：",
        "[2023年5月8日]",
        "用户: 我对花生过敏",
    ]
    assert MARKERS["zh"] not in messages[1]["content"]


def test_no_profile_no_memories_and_no_turns_means_no_block() -> None:
    result = assemble(doc([SYSTEM, FIRST]), "", [], [], "Hi there", limits())
    assert result.messages == [SYSTEM, FIRST, {"role": "user", "content": "Hi there"}] and result.recalled == []


def test_over_budget_drops_lowest_scored_memories_then_cuts_profile() -> None:
    context = doc([SYSTEM, FIRST])
    profile = "\n".join(f"The user said thing number {n} worth keeping" for n in range(12))
    recalled = [memory(n, f"memory {n} " + "detail " * 20) for n in range(3)]
    base = count_messages([SYSTEM, FIRST, {"role": "user", "content": "q"}])
    full = assemble(context, profile, recalled, [], "q", limits(100_000, 100_000))
    assert len(full.recalled) == 3
    # room for the profile and one memory only
    budget = count_messages(messages_of(context, profile, recalled[:1], "q", limits(100_000, 100_000)))
    assert budget < count_messages(full.messages)
    result = assemble(context, profile, recalled, [], "q", limits(budget, budget))
    assert count_messages(result.messages) <= budget
    assert [m.id for m in result.recalled] == ["id0"]
    assert profile.split("\n")[-1] in result.messages[2]["content"]
    # room for a part of the profile only
    result = assemble(context, profile, recalled, [], "q", limits(base + 60, base + 60))
    assert count_messages(result.messages) <= base + 60 and result.recalled == []
    assert "thing number 11" in result.messages[2]["content"] and "thing number 0 " not in result.messages[2]["content"]
    # no room at all: the block goes, the context stays
    result = assemble(context, profile, recalled, [], "q", limits(base, base))
    assert result.messages == [SYSTEM, FIRST, {"role": "user", "content": "q"}] and result.recalled == []


def test_recalled_turns_carry_speaker_in_time_order_under_one_heading_per_day() -> None:
    later = entry(40, "My sister moved to Lisbon.", ts=MAY_8_2023 + 86400 * 30)
    earlier = entry(3, "I went to a support group yesterday.")
    neighbour = ArchiveEntry("n", "s1", 4, "assistant", "Melanie", MAY_8_2023, "That sounds powerful!")
    archived = [(later, 3.0), (earlier, 2.0), (neighbour, 0.0)]
    block = messages_of(doc([SYSTEM, FIRST], positions=[0, 1]), "", [], "What about the group?", limits(), archived)[2][
        "content"
    ]
    assert block.splitlines()[-6:] == [
        "From earlier conversations:",
        "[8 May 2023]",
        "Caroline: I went to a support group yesterday (7 May 2023).",
        "Melanie: That sounds powerful!",
        "[7 June 2023]",
        "Caroline: My sister moved to Lisbon.",
    ]


def test_turns_the_context_shows_are_not_recalled() -> None:
    tail = [{"role": "assistant", "content": "Lisbon has trams."}, {"role": "user", "content": "Nice."}]
    context = doc([SYSTEM, FIRST, *tail], positions=[0, 1, 8, 9])
    archived = [
        (entry(1, FIRST["content"]), 4.0),
        (entry(8, "Lisbon has trams."), 3.0),
        (entry(2, "Tram 28 is old."), 2.0),
        (entry(3, "Trams in Porto too.", session="other"), 1.0),
        (entry(30, "Nice.", session="other"), 0.5),
    ]
    result = assemble(context, "", [], archived, "Which tram?", limits())
    # same text as a shown message ("Nice.") counts as shown; the same day: then by session and position
    assert [(t.entry.session, t.entry.position) for t in result.turns] == [("other", 3), ("s1", 2)]


def test_a_tight_prompt_cuts_the_oldest_tail_to_make_room_for_recall() -> None:
    conversation = [SYSTEM, FIRST]
    for n in range(40):
        conversation += [
            {"role": "assistant", "content": f"Step {n}: " + "details " * 20},
            {"role": "user", "content": f"Next {n}, please."},
        ]
    result = compact(conversation, 2000)
    stored = ContextDoc(session_id="s1", version=1, last_turn_id="t", updated_at=0.0, **result.to_dict())
    archived = [(entry(500 + n, f"Old detail {n}: " + "words " * 10), 10.0 - n) for n in range(30)]
    settings = limits(prompt=1500, recall=600)
    assembled = assemble(stored, "", [], archived, "What was the old detail?", settings)
    messages = assembled.messages
    assert count_messages(messages) <= 1500
    assert messages[:2] == [SYSTEM, FIRST] and messages[-2] == conversation[-1]
    assert (
        messages[2] == marker_message("en")
        and "Summary" not in messages[3]["content"]
        or messages[3] == result.messages[3]
    )
    block = next(m for m in messages if "From earlier conversations:" in (m.get("content") or ""))
    assert "Old detail 0:" in block["content"] and len(assembled.turns) >= 5
    # the tail starts at a whole message of the stored context and runs to its end
    kept_tail = messages[messages.index(block) + 1 : -1]
    assert kept_tail == list(result.messages[len(result.messages) - len(kept_tail) :])


def test_the_tail_takes_back_the_room_recall_leaves() -> None:
    conversation = [SYSTEM, FIRST]
    for n in range(10):
        conversation += [{"role": "assistant", "content": f"Step {n}."}, {"role": "user", "content": f"Next {n}."}]
    stored = ContextDoc(
        session_id="s1", version=1, last_turn_id="t", updated_at=0.0, **compact(conversation, 4000).to_dict()
    )
    budget = count_messages(conversation) + 5
    messages = messages_of(stored, "", [], "q", limits(prompt=budget + 10, recall=budget // 2))
    assert messages[:-1] == conversation  # nothing recalled: the whole context fits and nothing was cut


def test_tool_results_never_lose_their_call_in_a_cut() -> None:
    call = {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": f"c{i}", "type": "function", "function": {"name": "search", "arguments": "{}"}} for i in range(3)
        ],
    }
    results = [{"role": "tool", "tool_call_id": f"c{i}", "content": "result " * 60} for i in range(3)]
    conversation = [
        SYSTEM,
        FIRST,
        call,
        *results,
        {"role": "assistant", "content": "Done."},
        {"role": "user", "content": "Thanks, and?"},
    ]
    stored = ContextDoc(
        session_id="s1", version=1, last_turn_id="t", updated_at=0.0, **compact(conversation, 4000).to_dict()
    )
    archived = [(entry(100 + n, "archived words " * 8), 5.0 - n / 10) for n in range(20)]
    for prompt in range(300, 900, 25):
        messages = messages_of(stored, "", [], "q?", limits(prompt=prompt, recall=prompt // 2), archived)
        tool_ids = [m["tool_call_id"] for m in messages if m["role"] == "tool"]
        assert tool_ids in ([], ["c0", "c1", "c2"])
        assert (call in messages) == bool(tool_ids)


def test_a_memory_line_a_recalled_turn_shows_is_said_once_by_the_turn() -> None:
    summary = Recalled(
        "sum", "summary", "[2023-05]\nLin: my sister's cat is called Pistachio.\nLin: the rent goes up.", 0.9, 1
    )
    fact = Recalled("f1", "fact", "Lin: my sister's cat is called Pistachio.", 0.8, 1)
    kept = without_lines([summary, fact], {"Lin: my sister's cat is called Pistachio."})
    assert [(m.id, m.text) for m in kept] == [
        ("sum", "[2023-05]\nLin: the rent goes up.")
    ]  # the fact said nothing else
    assert without_lines([summary], set()) == [summary]


def test_a_profile_line_a_recalled_turn_shows_is_said_once_by_the_turn() -> None:
    profile = "Caroline: My sister's cat is called Pistachio.\nCaroline: I live in Lyon."
    archived = [(entry(3, "My sister's cat is called Pistachio."), 2.0)]
    block = next(
        m
        for m in messages_of(None, profile, [], "What is the cat called?", limits(), archived)
        if m["role"] == "system"
    )
    lines = block["content"].splitlines()
    assert lines.count("Caroline: My sister's cat is called Pistachio.") == 1
    assert lines.index("Caroline: My sister's cat is called Pistachio.") > lines.index("[8 May 2023]")
    assert "Caroline: I live in Lyon." in lines


@pytest.mark.timeout(20)
def test_a_budget_the_anchors_and_newest_step_overrun_still_gives_a_prompt_without_the_block() -> None:
    # the smallest budget a request may ask for (64 tokens) under a long first message: the block's room is
    # negative, and an empty block must end the cutting (it once looped for ever)
    stored = doc(
        [
            SYSTEM,
            {"role": "user", "content": "Plan a trip to Lisbon. " * 20},
            {"role": "assistant", "content": "Sure. " * 30},
        ]
    )
    assembled = assemble(
        stored,
        "I like trains.\nMy budget is 3500 EUR.",
        [memory(1), memory(2)],
        [(entry(9, "Old detail"), 1.0)],
        "And the budget?",
        limits(prompt=64, recall=3000),
    )
    assert assembled.messages[-1] == {"role": "user", "content": "And the budget?"}
    assert not assembled.recalled and not assembled.turns
    assert not any("Memory about the user" in (m.get("content") or "") for m in assembled.messages)


def _agent_doc(budget: int) -> tuple[ContextDoc, list[str]]:
    """A compacted agent session whose tool results (one booking id each) the worker's block could not all show."""
    conversation: list[dict[str, Any]] = [SYSTEM, FIRST]
    ids = [f"BK{n:04d}Z" for n in range(12)]
    for n, booking in enumerate(ids):
        call = {"id": f"c{n}", "type": "function", "function": {"name": "get_booking", "arguments": f'{{"n": {n}}}'}}
        result = f'{{"booking_id": "{booking}", "status": "confirmed", "notes": "{"seat and meal details " * 8}"}}'
        conversation += [
            {"role": "user", "content": f"Look up booking number {n}."},
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": f"c{n}", "content": result},
            {"role": "assistant", "content": f"Found booking {n}: " + "it is confirmed with everything in order. " * 4},
        ]
    stored = ContextDoc(
        session_id="s1",
        version=1,
        last_turn_id="t",
        updated_at=0.0,
        **compact(conversation, budget, strategy=build_strategy(Settings())).to_dict(),
    )
    return stored, ids


def test_room_recall_leaves_shows_more_of_the_facts_the_worker_cut() -> None:
    stored, ids = _agent_doc(350)
    shown_by_worker = sum(booking in str(stored.messages) for booking in ids)
    messages = messages_of(stored, "", [], "Book it.", limits(prompt=4000, recall=2000))
    assert count_messages(messages) <= 4000
    assert sum(booking in str(messages) for booking in ids) > shown_by_worker
    assert all(booking in str(messages) for booking in ids)  # the room is there: every stored fact is shown


def test_an_agent_s_facts_take_their_share_of_the_memory_room_before_recall(monkeypatch: pytest.MonkeyPatch) -> None:
    stored, ids = _agent_doc(350)
    archived = [(entry(500 + n, f"Old chat {n}: " + "words about the trip " * 40), 10.0 - n) for n in range(60)]
    settings = limits(prompt=1100, recall=900)  # too little room for all of both

    def shown() -> tuple[int, int]:
        assembled = assemble(stored, "", [], archived, "Book it.", settings)
        assert count_messages(assembled.messages) <= 1300
        return sum(booking in str(assembled.messages) for booking in ids), len(assembled.turns)

    facts_first, turns = shown()
    monkeypatch.setattr(importlib.import_module("turnstream.prompt.assemble"), "AGENT_FACTS_SHARE", 0.0)
    recall_first, more_turns = shown()
    assert facts_first > recall_first and 0 < turns < more_turns  # recall still gets the rest of its room


def test_a_context_whose_anchors_left_no_room_for_its_block_gets_one_in_a_roomier_prompt() -> None:
    policy = {"role": "system", "content": "Follow the booking policy. " * 120}
    conversation: list[dict[str, Any]] = [policy, FIRST]
    for n in range(6):
        call = {"id": f"c{n}", "type": "function", "function": {"name": "get_booking", "arguments": f'{{"n": {n}}}'}}
        conversation += [
            {"role": "user", "content": f"Look up booking number {n}."},
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": f"c{n}", "content": f'{{"booking_id": "BK{n:04d}Z", "status": "ok"}}'},
        ]
    budget = count_messages(conversation[:2]) + 60  # the anchors, the marker and the newest step: no block
    result = compact(conversation, budget, strategy=build_strategy(Settings()))
    assert result.marker_index is not None and result.facts
    assert "BK0000Z" not in str(result.messages)  # the worker's context had no room for the block
    stored = ContextDoc(session_id="s1", version=1, last_turn_id="t", updated_at=0.0, **result.to_dict())
    messages = messages_of(stored, "", [], "Book them all.", limits(prompt=budget + 400, recall=200))
    assert count_messages(messages) <= budget + 400
    assert messages[result.marker_index]["content"] == result.messages[result.marker_index]["content"]
    block = messages[result.marker_index + 1]
    assert block["role"] == "system" and "BK0000Z" in block["content"]  # the prompt had the room: the block is back


def booking_lookups(policy_repeats: int, lookups: int, asked: str = "") -> tuple[list[dict[str, Any]], list[str]]:
    """An agent's conversation under a policy of `policy_repeats` sentences: a user's request (`asked` after its
    number), a get_booking call and its result, `lookups` times; with the bookings' ids."""
    conversation: list[dict[str, Any]] = [
        {"role": "system", "content": "Follow the booking policy. " * policy_repeats},
        FIRST,
    ]
    ids = [f"BK{n:04d}Z" for n in range(lookups)]
    for n, booking in enumerate(ids):
        call = {"id": f"c{n}", "type": "function", "function": {"name": "get_booking", "arguments": f'{{"n": {n}}}'}}
        conversation += [
            {"role": "user", "content": f"Look up booking number {n}{asked}."},
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": f"c{n}", "content": f'{{"booking_id": "{booking}", "status": "ok"}}'},
        ]
    return conversation, ids


def test_under_a_long_policy_an_agent_s_facts_take_all_the_little_room_before_recall() -> None:
    conversation, ids = booking_lookups(700, 12)
    anchors = count_messages(conversation[:2])
    result = compact(conversation, anchors + 60, strategy=build_strategy(Settings()))
    stored = ContextDoc(session_id="s1", version=1, last_turn_id="t", updated_at=0.0, **result.to_dict())
    archived = [(entry(500 + n, f"Old chat {n} about booking number {n}."), 10.0 - n) for n in range(20)]
    prompt = anchors + 300  # a block's share of the context is far more than the room the policy leaves
    assembled = assemble(stored, "", [], archived, "Book them all.", limits(prompt=prompt, recall=prompt // 4))
    assert count_messages(assembled.messages) <= prompt
    assert not assembled.turns  # recall gets none of it
    assert sum(booking in str(assembled.messages) for booking in ids) >= 8


def test_the_memory_block_does_not_repeat_the_users_message() -> None:
    question = "I never paid Best Buy #1182 on 2024-06-17."
    profile = f"I need to pay my rent.\n{question}"
    archived = [(entry(3, question), 9.0), (entry(1, "Caroline paid her rent on the first."), 5.0)]
    assembled = assemble(
        None, profile, [memory(0, question), memory(1, "The card ends in 4417.")], archived, question, limits()
    )
    block = next(m["content"] for m in assembled.messages if m["role"] == "system")
    assert question not in block  # not as a profile line, a memory, nor an archived turn: the prompt ends with it
    assert "I need to pay my rent." in block and "The card ends in 4417." in block and "paid her rent" in block
    assert [m.text for m in assembled.recalled] == ["The card ends in 4417."]
    assert assembled.messages[-1] == {"role": "user", "content": question}


def test_an_agent_s_recent_steps_stay_whole_before_recall_takes_any_room() -> None:
    conversation, ids = booking_lookups(60, 30, ", the one with the sea view and late checkout")
    context = 1500
    result = compact(conversation, context, strategy=build_strategy(Settings()))
    stored = ContextDoc(session_id="s1", version=1, last_turn_id="t", updated_at=0.0, **result.to_dict())
    recent = [
        booking for booking in ids if any(booking in str(m["content"]) for m in result.messages if m["role"] == "tool")
    ]
    assert len(recent) >= 4
    archived = [
        (entry(500 + n, f"Old chat {n} about a booking with a sea view and late checkout. " * 12), 10.0 - n)
        for n in range(60)
    ]
    # the defaults' proportions: the context two thirds of the prompt, the memory block half of it
    assembled = assemble(
        stored, "", [], archived, "Book them all.", limits(prompt=context * 3 // 2, recall=context * 3 // 4)
    )
    assert count_messages(assembled.messages) <= context * 3 // 2
    assert assembled.turns  # recall has the room the context leaves
    assert all(booking in str(assembled.messages) for booking in recent)  # the steps the worker kept whole


def test_a_newest_step_over_what_a_long_policy_leaves_has_its_results_cut_to_keep_the_prompt_in_budget() -> None:
    policy = {"role": "system", "content": "Rule: always confirm before booking. " * 120}
    call = {"id": "c1", "type": "function", "function": {"name": "book_flight", "arguments": '{"flight_no": "CA929"}'}}
    booked = '{"order_id": "F2449566952", "status": "issued", "notes": "' + "seat and meal details " * 30 + '"}'
    step = [
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c1", "content": booked},
    ]
    stored = doc([policy, FIRST, marker_message("en"), *step], marker_index=2, positions=[0, 1, None, 40, 41])
    whole = count_messages([policy, FIRST, marker_message("en"), *step, {"role": "user", "content": "Book it."}])
    budget = whole - 60
    messages = messages_of(stored, "", [], "Book it.", limits(prompt=budget, recall=0))
    assert count_messages(messages) <= budget
    assert messages[:3] == [policy, FIRST, marker_message("en")] and messages[3] == step[0]  # the call stays whole
    assert messages[4]["role"] == "tool" and "F2449566952" in messages[4]["content"]
    assert messages[4]["content"] != booked
