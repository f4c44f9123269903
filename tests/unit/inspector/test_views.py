"""The inspector's pure parts on plain documents: keys, search, parts, bars, escaping."""

from __future__ import annotations

import base64
import re
from typing import Any

import pytest

from turnstream.inspector.app import is_loopback, token_matches
from turnstream.inspector.markup import Html, bar, html
from turnstream.inspector.pages import SessionView, VersionView, list_page, session_page, version_page
from turnstream.inspector.views import (
    bar_percent,
    context_parts,
    dropped_positions,
    matches,
    session_row,
    session_rows,
    user_of,
)
from turnstream.prompt.assemble import Prompt
from turnstream.redis.inspection import OwnerData
from turnstream.redis.keys import parse_context_key, scan_pattern
from turnstream.schemas.context import ContextDoc

SCRIPT = "<script>alert('x')</script>"


def doc(**fields: Any) -> ContextDoc:
    base: dict[str, Any] = {
        "session_id": "s1",
        "tenant": "acme",
        "version": 9,
        "last_turn_id": "t9",
        "updated_at": 1_700_000_000.0,
        "messages": [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "Plan Lisbon."},
            {"role": "system", "content": "--- compressed ---"},
            {"role": "system", "content": "[Summary] budget 4800"},
            {"role": "assistant", "content": "Booked."},
            {"role": "user", "content": "Thanks"},
        ],
        "positions": [0, 1, None, None, 7, 8],
        "message_tokens": [10, 20, 30, 40, 50, 60],
        "marker_index": 2,
        "dropped": 5,
        "summary": "budget 4800",
        "facts": [{"type": "constraint", "text": "Budget is 4800 EUR"}],
        "tokens": {"before": 1000, "after": 210, "budget": 400},
        "timings": {"ingest": 0.5, "compaction": 2.0},
    }
    return ContextDoc(**{**base, **fields})


@pytest.mark.parametrize(
    ("key", "expected"),
    [
        ("p:ctx:{acme:maya}:acme:s1", ("acme:maya", "acme:s1")),
        ("p:ctx:{s1}:s1", ("s1", "s1")),
        ("p:ctx:{we}:ird}:s1", ("we}:ird", "s1")),  # a user id may hold "}:", a session key never does
        ("p:applied:{acme:maya}:acme:s1", None),
        ("other:ctx:{a}:s", None),
        ("p:ctx:{}:s1", None),
    ],
)
def test_context_keys_name_their_owner_and_session(key: str, expected: tuple[str, str] | None) -> None:
    assert parse_context_key("p", key) == expected


@pytest.mark.parametrize(
    ("owner", "session", "tenant", "user"),
    [
        ("acme:maya", "acme:s1", "acme", "maya"),
        ("maya", "s1", None, "maya"),
        ("acme:s1", "acme:s1", "acme", None),
    ],
)
def test_the_user_is_the_owner_without_its_tenant(
    owner: str, session: str, tenant: str | None, user: str | None
) -> None:
    assert user_of(owner, session, tenant) == user


def test_the_scan_pattern_ignores_case_and_escapes_glob_characters() -> None:
    assert scan_pattern("p", "") == "p:ctx:{*"
    assert scan_pattern("p", "aB1*") == "p:ctx:{*[aA][bB]1\\**"
    pattern = scan_pattern("p", "MaYa")
    regex = re.escape("p:ctx:{").replace("\\*", ".*") + ".*" + pattern.split("{*", 1)[1].replace("*", ".*")
    assert re.fullmatch(regex, "p:ctx:{acme:maya}:acme:s1")


def test_search_finds_a_session_by_id_user_or_tenant_in_any_case_and_nothing_else() -> None:
    row = session_row("acme:maya", doc())
    assert all(matches(row, q) for q in ("", "S1", "MAYA", "acm", "  maya "))
    assert not matches(row, "ctx") and not matches(row, "}:")  # the key's layout is not searchable text
    assert not matches(session_row("acme:s1", doc()), "maya")


def test_rows_keep_the_newest_version_of_a_session_newest_update_first() -> None:
    old = doc(version=3, updated_at=5.0)
    found = [("acme:s1", old), ("acme:maya", doc()), ("acme:bob", doc(session_id="s2", updated_at=2e9))]
    rows = session_rows(found)
    assert [(r.session_key, r.owner, r.version) for r in rows] == [
        ("acme:s2", "acme:bob", 9),
        ("acme:s1", "acme:maya", 9),
    ]
    assert rows[1].turns == 9 and (rows[1].naive_tokens, rows[1].compacted_tokens) == (1000, 210)
    assert [r.session_id for r in session_rows(found, "BOB")] == ["s2"]


@pytest.mark.parametrize(
    ("value", "scale", "percent"), [(50, 200, 25.0), (0, 100, 0.0), (300, 100, 100.0), (5, 0, 0.0), (-1, 10, 0.0)]
)
def test_bars_are_a_share_of_their_scale_within_0_and_100(value: float, scale: float, percent: float) -> None:
    assert bar_percent(value, scale) == percent


def test_a_bar_is_as_wide_as_its_share() -> None:
    assert 'style="width:25.0%"' in bar(25.0, "10 tokens") and 'style="width:100.0%"' in bar(250.0)


def test_the_context_splits_into_anchors_marker_block_and_tail_with_their_tokens() -> None:
    parts = context_parts(doc())
    assert [(p.kind, p.tokens, len(p.messages)) for p in parts] == [
        ("anchor", 30, 2),
        ("marker", 30, 1),
        ("block", 40, 1),
        ("tail", 110, 2),
    ]
    assert [m.position for m in parts[-1].messages] == [7, 8]
    plain = doc(
        messages=[
            {"role": "system", "content": "x"},
            {"role": "user", "content": "y"},
            {"role": "assistant", "content": "z"},
        ],
        positions=[0, 1, 2],
        message_tokens=[1, 2, 3],
        marker_index=None,
        dropped=0,
        summary="",
        facts=[],
    )
    assert [(p.kind, p.tokens) for p in context_parts(plain)] == [("anchor", 3), ("tail", 3)]
    assert dropped_positions(plain) == [] and dropped_positions(doc()) == [2, 3, 4, 5, 6]


def test_html_escapes_every_value_but_markup_it_built() -> None:
    assert html("<p>{x}</p>", x=SCRIPT) == "<p>&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;</p>"
    assert html("<p>{x}</p>", x=Html("<b>ok</b>")) == "<p><b>ok</b></p>"
    assert html("<p>{x}</p>", x='" onmouseover="x') == "<p>&quot; onmouseover=&quot;x</p>"
    assert Html("<i>") + SCRIPT == "<i>&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;"


def test_no_session_text_reaches_a_page_unescaped() -> None:
    hostile = doc(
        session_id="s1",
        messages=[
            {"role": "user", "content": SCRIPT, "name": SCRIPT},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [{"id": "c1", "type": "function", "function": {"name": SCRIPT, "arguments": SCRIPT}}],
            },
            {"role": "tool", "tool_call_id": SCRIPT, "content": SCRIPT},
        ],
        positions=[0, 1, 2],
        message_tokens=[5, 5, 5],
        marker_index=None,
        dropped=0,
        summary=SCRIPT,
        facts=[{"type": SCRIPT, "text": SCRIPT, "key": SCRIPT}],
        timings={SCRIPT: 1.0},
    )
    prompt = Prompt(
        [{"role": "user", "content": SCRIPT}],
        [{"id": "m", "type": SCRIPT, "text": SCRIPT}],
        [{"score": 1.5, "hit": True, "line": SCRIPT}],
        False,
        {"total": 1.0},
    )
    owner = OwnerData([], SCRIPT, 1)
    page = session_page(SessionView(SCRIPT, SCRIPT, hostile, owner, [], SCRIPT, prompt))
    listing = list_page(session_rows([(SCRIPT, hostile)]), SCRIPT, True)
    earlier = version_page(VersionView(hostile, 12, SCRIPT))
    for text in (page, listing, earlier):
        assert "<script" not in text.lower() and "&lt;script&gt;" in text
    assert page.count("&lt;script&gt;") >= 12


def test_a_long_message_starts_folded_and_a_question_shows_its_recalled_lines_with_scores() -> None:
    long = doc(
        messages=[{"role": "user", "content": "word " * 500}], positions=[0], message_tokens=[500], marker_index=None
    )
    prompt = Prompt(
        [{"role": "user", "content": "hotel?"}],
        [{"id": "m1", "type": "fact", "text": "Budget 4800"}],
        [{"score": 2.25, "hit": True, "line": "[8 May] user: Go with Casa Azahar."}],
        False,
        {"total": 1.0},
    )
    page = session_page(SessionView("acme:maya", "maya", long, OwnerData([], "", 0), [], "hotel?", prompt))
    assert "<details><summary>word word" in page and "(2,500 characters)" in page
    assert (
        '<tr class="hit"><td class="num">2.250</td><td>hit</td><td><pre>[8 May] user: Go with Casa Azahar.</pre>'
        in page
    )
    assert 'value="hotel?"' in page and "fact: Budget 4800" in page


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("127.0.0.1", True),
        ("127.8.0.1", True),
        ("::1", True),
        ("[::1]", True),
        ("localhost", True),
        ("0.0.0.0", False),
        ("10.0.0.5", False),
        ("::", False),
        ("example.com", False),
        ("", False),
    ],
)
def test_only_loopback_addresses_count_as_loopback(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback


def test_the_token_is_taken_as_bearer_or_as_the_basic_password() -> None:
    basic = base64.b64encode(b"anyone:s3cret").decode()
    assert token_matches("Bearer s3cret", "s3cret") and token_matches(f"Basic {basic}", "s3cret")
    assert not token_matches("Bearer s3cre", "s3cret") and not token_matches("", "s3cret")
    assert not token_matches("Basic !!notbase64", "s3cret") and not token_matches("Token s3cret", "s3cret")


def test_a_session_links_its_earlier_versions_when_a_broker_is_configured() -> None:
    owner = OwnerData([], "", 0)
    linked = session_page(SessionView("acme:maya", "maya", doc(version=40), owner, [], rebuilds=True))
    versions = re.findall(r'href="/sessions/acme%3As1/versions\?v=(\d+)"', linked)
    assert versions == ["1", "10", "20", "39"]
    assert 'action="/sessions/acme%3As1/versions"' in linked and 'max="39"' in linked
    alone = session_page(SessionView("acme:maya", "maya", doc(version=40), owner, []))
    assert "/versions" not in alone and "Set TURNSTREAM_KAFKA_URL" in alone
    first = session_page(SessionView("acme:maya", "maya", doc(version=1), owner, [], rebuilds=True))
    assert "/versions" not in first and "This is the first version." in first


def test_an_earlier_version_links_its_neighbours_and_says_how_it_compares() -> None:
    page = version_page(VersionView(doc(version=9), 12, "Redis holds version 12; not compared"))
    assert re.findall(r'href="/sessions/acme%3As1/versions\?v=(\d+)"', page) == ["8", "10"]
    assert '<p id="comparison">Redis holds version 12; not compared</p>' in page
    assert "Session s1 at version 9" in page and "Booked." in page and "budget 4800" in page
    last = version_page(VersionView(doc(version=1), 1, "equal to the stored version 1"))
    assert "/versions?" not in last and 'href="/sessions/acme%3As1"' in last


def test_a_prompt_preview_says_where_each_message_came_from() -> None:
    context = doc(
        messages=[{"role": "user", "content": "hotel?"}], positions=[0], message_tokens=[3], marker_index=None
    )
    prompt = Prompt(
        [{"role": "system", "content": "[Memory about the user]"}, {"role": "user", "content": "hotel?"}],
        [{"id": "m1", "type": "fact", "text": "Budget 4800"}],
        [],
        False,
        {"total": 1.0},
        [
            [
                {"kind": "memory", "id": "m1", "score": 0.9},
                {"kind": "archive", "id": "e7", "session": "s1", "position": 7, "score": 2.25},
            ],
            [{"kind": "question"}],
        ],
    )
    page = session_page(SessionView("acme:maya", "maya", context, OwnerData([], "", 0), [], "hotel?", prompt))
    assert '<div class="meta sources">from memory m1, score 0.9, archive e7 (s1 #7), score 2.25</div>' in page
    assert '<div class="meta sources">from question</div>' in page
