"""Which turns a record request may send, and when an erasure finds nothing."""

from __future__ import annotations

import pytest

from turnstream.serve.scope import BadTurns, NoOwner, OutOfScope, Scope, nothing_to_erase, owner_for, scoped_turns

ACME = Scope("acme")


def test_turns_get_the_tokens_tenant_and_keep_their_own_session() -> None:
    turns = [
        {"turn_id": "t1", "session_id": "s1", "message": {}},
        {"turn_id": "t2", "session_id": "s1", "tenant": "acme"},
        {"turn_id": "t3"},
    ]
    assert scoped_turns(turns, "s1", ACME) == [
        {"turn_id": "t1", "session_id": "s1", "message": {}, "tenant": "acme"},
        {"turn_id": "t2", "session_id": "s1", "tenant": "acme"},
        {"turn_id": "t3", "tenant": "acme"},  # no session_id: the model says it is required
    ]


def test_a_turn_of_another_tenant_is_out_of_scope_even_after_good_ones() -> None:
    with pytest.raises(OutOfScope):
        scoped_turns([{"turn_id": "t1"}, {"turn_id": "t2", "tenant": "globex"}], "s1", ACME)


def test_a_turn_of_another_session_names_its_field() -> None:
    with pytest.raises(BadTurns) as caught:
        scoped_turns([{"turn_id": "t1"}, {"turn_id": "t2", "session_id": "s2"}], "s1", ACME)
    assert caught.value.field == "turns.1.session_id"


def test_an_open_scope_sets_no_tenant_and_refuses_a_named_one() -> None:
    assert scoped_turns([{"turn_id": "t1", "session_id": "s1"}], "s1", Scope(None)) == [
        {"turn_id": "t1", "session_id": "s1"}
    ]
    with pytest.raises(OutOfScope):
        scoped_turns([{"turn_id": "t1", "tenant": "acme"}], "s1", Scope(None))


def test_values_that_are_not_objects_are_left_for_the_model_to_refuse() -> None:
    assert scoped_turns("nope", "s1", ACME) == "nope"
    assert scoped_turns([3], "s1", ACME) == [3]


@pytest.mark.parametrize(
    "counts, empty",
    [
        ({"sessions (Table rows)": 1}, True),
        ({"sessions (Table rows)": 1, "contexts": 0, "memories": 0}, True),
        ({"sessions (Table rows)": 0, "memories": 2}, False),
        ({"contexts": 1}, False),
    ],
)
def test_nothing_to_erase_ignores_the_rows_it_would_only_ask_for(counts: dict[str, int], empty: bool) -> None:
    assert nothing_to_erase(counts) is empty


def test_the_owner_of_a_search_or_note_is_the_tenants_user_or_the_sessions_own() -> None:
    assert owner_for(ACME, "maya", None) == "acme:maya"
    assert owner_for(ACME, None, "s1") == ":acme:s1"
    assert owner_for(Scope(None), "a:b", None) == "a%3Ab"  # escaped: no id of one tenant spells another's
    assert owner_for(Scope("globex"), "maya", None) != owner_for(ACME, "maya", None)
    with pytest.raises(NoOwner):  # a 422 over HTTP, a tool error over MCP
        owner_for(ACME, None, None)
