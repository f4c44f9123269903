from urllib.parse import unquote

import pytest
from hypothesis import given
from hypothesis import strategies as st

from turnstream.redis.keys import KeyLayout
from turnstream.schemas.ids import Forward, escape, owner_key, route, session_key, session_owner, user_owner

# the characters the encoding treats specially, plus a few ordinary ones and what they escape to
ids = st.text(alphabet=":%{}aA3b-", min_size=1, max_size=8)
tenants = st.none() | ids


def redis_hash_tag(key: str) -> str:
    """The part of a key Redis Cluster hashes: between the first `{` and the first `}` after it."""
    start = key.index("{")
    return key[start + 1 : key.index("}", start + 1)]


@pytest.mark.parametrize(
    ("tenant", "session_id", "key"),
    [
        (None, "s-7", "s-7"),
        ("acme", "s1", "acme:s1"),
        ("acme", "user:7", "acme:user%3A7"),
        (None, "co:lide", "co%3Alide"),
        ("co", "lide", "co:lide"),
        (None, "50%", "50%25"),
        (None, "{x}", "%7Bx%7D"),
        ("t", "会话.1_a", "t:会话.1_a"),
    ],
)
def test_session_keys_escape_only_the_four_characters(tenant: str | None, session_id: str, key: str) -> None:
    assert session_key(session_id, tenant) == key


def test_the_colliding_ids_of_the_issue_get_keys_of_their_own() -> None:
    assert session_key("lide", "co") != session_key("co:lide")
    assert user_owner("alice", "acme") != user_owner("acme:alice")
    assert owner_key("alice", "acme", "s1") == "acme:alice"  # an ordinary user keeps the owner it had
    assert owner_key("acme:alice", None, "s1") == "acme%3Aalice"
    assert owner_key(None, None, "alice") == ":alice" != owner_key("alice", None, "s1")


@given(st.tuples(tenants, ids), st.tuples(tenants, ids))
def test_distinct_sessions_never_share_a_key(a: tuple[str | None, str], b: tuple[str | None, str]) -> None:
    if a != b:
        assert session_key(a[1], a[0]) != session_key(b[1], b[0])


@given(st.tuples(tenants, ids), st.tuples(tenants, ids))
def test_distinct_users_never_share_an_owner(a: tuple[str | None, str], b: tuple[str | None, str]) -> None:
    if a != b:
        assert user_owner(a[1], a[0]) != user_owner(b[1], b[0])


@given(tenants, ids, tenants, ids)
def test_users_and_sessions_never_meet(user_tenant: str | None, user: str, tenant: str | None, session: str) -> None:
    assert user_owner(user, user_tenant) != session_owner(session_key(session, tenant))
    assert owner_key(user, user_tenant, session) != owner_key(None, tenant, user)


@given(ids)
def test_escaping_is_undone_by_unquoting(part: str) -> None:
    assert unquote(escape(part)) == part
    assert not set(escape(part)) & set(":{}")


@given(tenants, ids, tenants, ids)
def test_every_redis_key_of_an_owner_hashes_on_exactly_that_owner(
    user_tenant: str | None, user: str, tenant: str | None, session: str
) -> None:
    layout = KeyLayout("p")
    for owner in (user_owner(user, user_tenant), session_owner(session_key(session, tenant))):
        keys = [*layout.owner(owner), *layout.session(owner, session_key(session, tenant))[:3]]
        assert {redis_hash_tag(key) for key in keys} == {owner}
    assert redis_hash_tag(layout.owner_pointer(session_key(session, tenant))) == session_key(session, tenant)


@pytest.mark.parametrize(
    ("record_key", "expected"),
    [
        (b"acme:s1", None),
        (None, Forward(b"acme:s1", "null_key")),
        (b"s1", Forward(b"acme:s1", "wrong_key")),
        (b"", Forward(b"acme:s1", "wrong_key")),
        (b"acme:s1 ", Forward(b"acme:s1", "wrong_key")),
    ],
)
def test_route_applies_only_a_turn_keyed_by_its_session(record_key: bytes | None, expected: Forward | None) -> None:
    assert route(record_key, session_key("s1", "acme")) == expected


def test_route_compares_with_the_escaped_key() -> None:
    assert route(b"co:lide", session_key("co:lide")) == Forward(b"co%3Alide", "wrong_key")
    assert route(b"co%3Alide", session_key("co:lide")) is None
