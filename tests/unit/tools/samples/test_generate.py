from collections import Counter
from typing import Any

import pytest

from turnstream.compaction import validate_messages
from turnstream.compaction.messages import call_ids
from turnstream.schemas.turn import Turn
from turnstream_tools.samples.conversations import generate_conversations, load_samples, stating_index, turns_of

BASES = {s.id: s for s in load_samples()}


def unpaired_calls(messages: list[dict[str, Any]]) -> list[int]:
    """Indices of calls not directly followed by all their results, except a call cut off by the end."""
    bad = []
    for index, message in enumerate(messages):
        ids = call_ids(message)
        results = [m.get("tool_call_id") for m in messages[index + 1 : index + 1 + len(ids)]]
        cut_off = index + len(ids) >= len(messages) and set(results) <= set(ids)
        if ids and Counter(results) != Counter(ids) and not cut_off:
            bad.append(index)
    return bad


@pytest.mark.parametrize("turns", [1, 2, 7, 45, 160, 320])
def test_every_generated_conversation_is_valid_and_exactly_turns_long(turns: int) -> None:
    conversations = generate_conversations(6, turns, seed=5)
    assert len(conversations) == 6
    for conversation in conversations:
        validate_messages(conversation.messages)
        assert len(conversation.messages) == turns


def test_calls_and_results_stay_paired_at_every_cut() -> None:
    ends_in_flight = 0
    for turns in range(20, 100, 3):
        for conversation in generate_conversations(3, turns, seed=turns):
            assert unpaired_calls(conversation.messages) == [], (conversation.id, turns)
            ends_in_flight += conversation.messages[-1]["role"] != "tool" and bool(call_ids(conversation.messages[-1]))
    assert ends_in_flight  # cuts do land inside call groups, and the rule above allowed only those


def test_the_pairing_check_catches_a_lost_result() -> None:
    messages = generate_conversations(3, 120, seed=1)[2].messages
    call = next(i for i, m in enumerate(messages) if len(call_ids(m)) >= 2)
    assert unpaired_calls(messages[: call + 2] + messages[call + 3 :]) == [call]


def test_generation_is_deterministic_per_seed() -> None:
    assert generate_conversations(4, 120, seed=3) == generate_conversations(4, 120, seed=3)
    assert generate_conversations(4, 120, seed=3) != generate_conversations(4, 120, seed=4)


def test_sessions_differ_and_have_their_own_users() -> None:
    conversations = generate_conversations(9, 150, seed=0)
    assert len({c.user_id for c in conversations}) == 9
    assert len({c.id for c in conversations}) == 9
    assert all(a.messages != b.messages for i, a in enumerate(conversations) for b in conversations[i + 1 :])


def test_values_vary_across_sessions_of_one_sample() -> None:
    support = [c for c in generate_conversations(15, 10, seed=2) if c.id.startswith("support_corrections")]
    assert len({c.messages[1]["content"] for c in support}) >= 2


def test_extra_steps_are_inserted_with_fresh_call_ids() -> None:
    conversation = generate_conversations(3, 300, seed=7)[2]
    base_ids = {i for m in BASES["travel_agent"].messages for i in call_ids(m)}
    ids = [i for m in conversation.messages for i in call_ids(m)]
    assert len(ids) == len(set(ids))
    assert set(ids) - base_ids


def test_planted_facts_are_stated_in_generated_conversations() -> None:
    for conversation in generate_conversations(6, 200, seed=11):
        base = BASES[conversation.id.rsplit("-", 2)[0]]
        assert len(conversation.planted_facts) == len(base.planted_facts)
        for fact in conversation.planted_facts:
            assert stating_index(fact, conversation.messages) is not None, (conversation.id, fact)


def test_a_short_cut_keeps_only_the_facts_it_states() -> None:
    for conversation in generate_conversations(3, 4, seed=0):
        base = BASES[conversation.id.rsplit("-", 2)[0]]
        assert len(conversation.planted_facts) < len(base.planted_facts)
        assert all(stating_index(f, conversation.messages) is not None for f in conversation.planted_facts)


@pytest.mark.parametrize(("sessions", "turns"), [(-1, 10), (2, 0)])
def test_bad_arguments_are_refused(sessions: int, turns: int) -> None:
    with pytest.raises(ValueError):
        generate_conversations(sessions, turns)


def test_turns_of_replays_every_message_as_a_valid_turn() -> None:
    sample = BASES["travel_agent"]
    turns = turns_of(sample, "sess-7", tenant="acme")
    assert [t["message"] for t in turns] == sample.messages
    assert [t["seq"] for t in turns] == list(range(len(sample.messages)))
    assert turns[3]["turn_id"] == "sess-7-3"
    assert all(a["ts"] < b["ts"] for a, b in zip(turns, turns[1:]))
    for value in turns:
        turn = Turn.model_validate(value)
        assert (turn.session_id, turn.tenant, turn.user_id, turn.meta) == ("sess-7", "acme", sample.user_id, {})
    assert turns_of(sample, "s")[0]["tenant"] is None
