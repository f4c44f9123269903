"""The Redis names: every name KeyLayout makes is one of redis/keys.NAMES, every one of NAMES is made, the scripts
declare their keys by the same patterns, and docs/protocol.md shows the table NAMES renders."""

from __future__ import annotations

import re

import pytest

from turnstream.redis.keys import NAMES, KeyLayout
from turnstream.redis.render import PROTOCOL, REGENERATE, keys_block, keys_table
from turnstream.redis.scripts import SCRIPTS

pytestmark = pytest.mark.unit

PREFIX, OWNER, SESSION = "pfx", "acme%3Amaya", "acme:s-7"


def made() -> list[str]:
    """Every name a layout makes for one owner and one session (a keyword set and a postings key for one word)."""
    layout = KeyLayout(PREFIX)
    owner = layout.owner(OWNER)
    return [
        *layout.session(OWNER, SESSION),
        *(name for field, name in owner._asdict().items() if not field.endswith("prefix")),
        owner.keyword_prefix + "budget",
        owner.term_prefix + "budget",
        layout.owner_pointer(SESSION),
        layout.forgotten(SESSION),
        layout.journal_replayed(),
        layout.journal_lock(),
        layout.contexts_verified(),
        layout.embedding_models(),
        layout.embedding_lock(),
        layout.shadow_running(),
    ]


def as_regex(pattern: str) -> re.Pattern[str]:
    """A NAMES pattern as the names it stands for under PREFIX, OWNER and SESSION."""
    parts = {"P": re.escape(PREFIX), "O": re.escape(OWNER), "S": re.escape(SESSION)}
    regex = re.sub(r"<[^>]+>", "\0", pattern)
    regex = "".join(parts.get(c, "[^:]+" if c == "\0" else re.escape(c)) for c in regex)
    return re.compile(regex + "$")


def test_every_name_the_layout_makes_is_exactly_one_of_the_table_and_each_of_the_table_is_made() -> None:
    patterns = {name.pattern: as_regex(name.pattern) for name in NAMES}
    matched: set[str] = set()
    for name in made():
        hits = [pattern for pattern, regex in patterns.items() if regex.match(name)]
        assert len(hits) == 1, (name, hits)
        matched.update(hits)
    assert matched == set(patterns)


def test_the_scripts_declare_their_keys_by_the_table_s_patterns() -> None:
    known = {re.sub(r"<[^>]+>", "<>", name.pattern) for name in NAMES}
    for spec in SCRIPTS:
        for position in [*spec.keys, *spec.key_tails]:
            assert re.sub(r"<[^>]+>", "<>", position.pattern) in known, (spec.name, position.pattern)


def test_the_protocol_page_shows_the_table_the_names_render() -> None:
    assert keys_block(PROTOCOL.read_text(encoding="utf-8")) == keys_table(), f"docs/protocol.md: run `{REGENERATE}`"
    assert all(f"| `{name.pattern}` |" in keys_table() for name in NAMES)
