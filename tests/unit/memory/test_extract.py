from turnstream.compaction.strategies.base import Fact
from turnstream.memory import changed_facts, memories_from_facts, summary_memory
from turnstream.schemas.ids import owner_key
from turnstream.schemas.memory import memory_id

NOW = 1_700_000_000.0


def test_key_info_types_map_to_memory_types() -> None:
    facts = [
        Fact("fact", "My name is Ana", "name"),
        Fact("preference", "I love window seats", "pref:window-seats"),
        Fact("event", "We booked the Lisbon hotel", "decision:booked-lisbon-hotel"),
        Fact("constraint", "My budget is 2000 EUR", "budget"),
        Fact("failure", "search_flights failed: timeout", "failure:search_flights:lis"),
    ]
    memories = memories_from_facts("acme:u1", facts, "acme:s1", NOW)
    assert [m.type for m in memories] == ["fact", "preference", "event", "fact", "event"]
    assert [m.text for m in memories] == [f.text for f in facts]
    assert {m.owner for m in memories} == {"acme:u1"} and {m.source_session for m in memories} == {"acme:s1"}
    assert all(m.created_at == m.updated_at == NOW and m.access_count == 0 for m in memories)


def test_importance_ranks_constraints_over_failures_and_rewards_cues() -> None:
    budget, failure, plain, emphatic = memories_from_facts(
        "u1",
        [
            Fact("constraint", "My budget is 2000 EUR", "budget"),
            Fact("failure", "search failed", "failure:search"),
            Fact("preference", "I like tea", "pref:tea"),
            Fact("preference", "Remember, I never drink coffee", "pref:coffee"),
        ],
        "s1",
        NOW,
    )
    assert budget.importance == 0.9 and failure.importance == 0.2
    assert emphatic.importance > plain.importance
    assert all(0 <= m.importance <= 1 for m in (budget, failure, plain, emphatic))


def test_tool_data_is_not_a_memory() -> None:
    facts = [
        Fact("fact", "search_flights(LIS) -> 3 results", "data:search_flights:lis"),
        Fact("fact", "I live in Porto", "home city"),
    ]
    assert [m.key for m in memories_from_facts("u1", facts, "s1", NOW)] == ["home city"]


def test_ids_are_stable_per_owner_and_key() -> None:
    first = memories_from_facts("acme:u1", [Fact("constraint", "My budget is 2000 EUR", "budget")], "acme:s1", NOW)[0]
    restated = memories_from_facts(
        "acme:u1", [Fact("constraint", "Actually my budget is 3500 EUR", "budget")], "acme:s2", NOW + 5
    )[0]
    other_user = memories_from_facts(
        "acme:u2", [Fact("constraint", "My budget is 2000 EUR", "budget")], "acme:s1", NOW
    )[0]
    assert first.id == restated.id == memory_id("acme:u1", "budget")
    assert other_user.id != first.id


def test_keywords_come_from_the_text_and_a_named_slot() -> None:
    (city,) = memories_from_facts("u1", [Fact("fact", "我住在上海", "home city")], "s1", NOW)
    (pref,) = memories_from_facts("u1", [Fact("preference", "I love window seats", "pref:window-seats")], "s1", NOW)
    assert city.keywords[:2] == ["home", "city"] and "上海" in city.keywords
    assert pref.keywords == ["love", "window", "seats"]  # a generic key's "pref" is no search term


def test_summary_is_one_memory_per_session() -> None:
    first = summary_memory("u1", "acme:s1", "The user plans a trip to Lisbon.", NOW)
    later = summary_memory("u1", "acme:s1", "The user plans a trip to Lisbon and Porto.", NOW + 60)
    other = summary_memory("u1", "acme:s2", "The user asked about trains.", NOW)
    assert first is not None and later is not None and other is not None
    assert first.type == "summary" and first.id == later.id != other.id
    assert "lisbon" in first.keywords
    assert summary_memory("u1", "acme:s1", "  ", NOW) is None


def test_owner_is_the_user_else_the_session() -> None:
    assert owner_key("u1", "acme", "s1") == "acme:u1"
    assert owner_key("u1", None, "s1") == "u1"
    assert owner_key(None, "acme", "s1") == ":acme:s1"  # a session's own namespace: no user's owner starts with ':'


def test_changed_facts_are_new_or_rewritten_ones() -> None:
    before = [Fact("constraint", "My budget is 2000 EUR", "budget"), Fact("fact", "My name is Ana", "name")]
    after = [
        Fact("fact", "My name is Ana", "name", 4),
        Fact("constraint", "Actually 3500 EUR", "budget"),
        Fact("preference", "I like tea", "pref:tea"),
    ]
    assert [f.key for f in changed_facts(before, after)] == ["budget", "pref:tea"]


def test_a_note_is_one_memory_whatever_its_spacing_and_case_and_weighs_as_its_type() -> None:
    from turnstream.memory.extract import note_memory

    first = note_memory("acme:maya", "Allergic to  peanuts. Always check!", "fact", "acme:s1", 1.0)
    again = note_memory("acme:maya", "allergic to peanuts. always check!", "fact", "", 2.0)
    assert first.id == again.id and first.key.startswith("note:") and first.text == "Allergic to peanuts. Always check!"
    assert first.importance == 0.7 and "peanuts" in first.keywords  # a fact, with an emphasis cue
    assert note_memory("globex:maya", "Allergic to peanuts.", "fact", "", 1.0).id != first.id  # per owner
    assert note_memory("acme:maya", "Likes trains.", "preference", "", 1.0).importance == 0.7
