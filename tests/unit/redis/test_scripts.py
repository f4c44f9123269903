"""Every Lua script against its spec (redis/scripts.py): the header it starts with, the positions its body
reads, docs/scripts.md; and the spec's calls built by name."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import turnstream
from turnstream.redis.render import DOCS, REGENERATE, body, docs, lua_header
from turnstream.redis.scripts import RECALL, REMEMBER, SCRIPTS, WRITE_CONTEXT, ArgTail, KeyTail, Position, ScriptSpec

pytestmark = pytest.mark.unit

PACKAGE = Path(turnstream.__file__).parent
STALE = f"generated from the specs in turnstream/redis/scripts.py: run `{REGENERATE}`"


def misreads(spec: ScriptSpec, lua: str) -> list[str]:
    """What a script body reads that its spec does not declare, and what the spec declares that the body never
    reads; empty when the two agree."""
    code = re.sub(r"--[^\n]*", "", lua)
    wrong: list[str] = []
    item = spec.arg_tail.item.upper() if spec.arg_tail and spec.arg_tail.fields else None
    tables = {
        "KEYS": {"KEY": {p.name for p in spec.keys}},
        "ARGV": {"ARG": {p.name for p in spec.argv}}
        | ({item: {f.name for f in spec.arg_tail.fields}} if item and spec.arg_tail else {}),
    }
    used: dict[str, set[str]] = {}
    for array, index in re.findall(r"\b(KEYS|ARGV)\[([^\]]*)\]", code):
        if re.search(r"(?<!\w)\d", index):
            wrong.append(f"{array}[{index}]: a position by number")
        for table, name in re.findall(r"\b([A-Z_]+)\.(\w+)", index):
            if name not in tables[array].get(table, ()):
                wrong.append(f"{array}[{index}]: {table}.{name} is not a declared {array} name")
            used.setdefault(table, set()).add(name)
    for table, names in (tables["KEYS"] | tables["ARGV"]).items():
        wrong += [f"{table}.{name} declared, never read" for name in sorted(names - used.get(table, set()))]
    for start, array, step in re.findall(r"\bfor \w+ = ([^,]+), #(KEYS|ARGV)(?:, (\S+))? do", code):
        fixed = "FIXED_KEYS" if array == "KEYS" else "FIXED_ARGV"
        if start not in ("1", f"{fixed} + 1") and not re.search(rf"\blocal {start} = {fixed}\b", code):
            wrong.append(f"for ... = {start}, #{array}: a tail starts at {fixed} + 1")
        if array == "ARGV" and (step or None) != (item and f"{item}_SIZE"):
            wrong.append(f"for ... #{array}, {step}: an item of ARGV's tail is {item}_SIZE arguments")
    for constant in ("FIXED_KEYS", "FIXED_ARGV", f"{item}_SIZE"):
        if constant in lua_header(spec) and not re.search(rf"\b{constant}\b", code):
            wrong.append(f"{constant} declared, never read")
    return wrong


def test_every_script_in_the_package_has_a_spec_and_every_spec_a_script() -> None:
    shipped = {path.relative_to(PACKAGE).as_posix() for path in PACKAGE.rglob("*.lua")}
    assert shipped == {spec.path for spec in SCRIPTS}


@pytest.mark.parametrize("spec", SCRIPTS, ids=lambda spec: spec.name)
def test_a_script_starts_with_the_header_its_spec_generates(spec: ScriptSpec) -> None:
    assert spec.text().startswith(lua_header(spec)), f"{spec.path}'s header is not {STALE}"


@pytest.mark.parametrize("spec", SCRIPTS, ids=lambda spec: spec.name)
def test_a_script_reads_every_position_by_a_name_its_spec_declares(spec: ScriptSpec) -> None:
    assert not misreads(spec, body(spec.text()))


def test_the_check_catches_positions_by_number_and_names_out_of_the_spec() -> None:
    old = (
        "local stored = redis.call('HGET', KEYS[1], 'version')\nfor i = 7, #ARGV do\n  redis.call('ZADD', "
        "KEYS[KEY.applied], ARGV[ARG.version], ARGV[i])\nend\nredis.call('PUBLISH', ARGV[ARG.channel], 1)\n"
    )
    assert misreads(WRITE_CONTEXT, old) == [
        "KEYS[1]: a position by number",
        "ARGV[ARG.channel]: ARG.channel is not a declared ARGV name",
        "KEY.context declared, never read",
        "ARG.dedup_window declared, never read",
        "ARG.doc declared, never read",
        "ARG.last_turn_id declared, never read",
        "ARG.ttl declared, never read",
        "ARG.updates declared, never read",
        "for ... = 7, #ARGV: a tail starts at FIXED_ARGV + 1",
        "FIXED_ARGV declared, never read",
    ]
    hard_coded = "local first_posting = 9 + keyword_count\nfor i = first_posting, #KEYS do\nend\n"
    assert "for ... = first_posting, #KEYS: a tail starts at FIXED_KEYS + 1" in misreads(RECALL, hard_coded)
    strided = "for i = FIXED_ARGV + 1, #ARGV, 4 do\nend\n"
    assert "for ... #ARGV, 4: an item of ARGV's tail is MEMORY_SIZE arguments" in misreads(REMEMBER, strided)


def test_docs_scripts_md_is_what_the_specs_generate() -> None:
    assert DOCS.read_text(encoding="utf-8") == docs(), f"docs/scripts.md is not {STALE}"


def test_a_call_puts_every_name_at_its_declared_position_and_counts_the_counted_tail() -> None:
    keys = {p.name: p.name.upper() for p in RECALL.keys}
    argv = {p.name: n for n, p in enumerate(RECALL.argv) if p.name != "keyword_count"}
    call = RECALL.call(**keys, **argv, keyword_sets=["kw1", "kw2"], postings=["t1"])
    assert call.keys == [*keys.values(), "kw1", "kw2", "t1"]
    assert dict(zip([p.name for p in RECALL.argv], call.args)) == {**argv, "keyword_count": 2}
    assert call.args == [0, 1, 2, 3, 4, 2, 6, 7, 8, 9, 10, 11, 12, 13, 14]


def test_a_call_flattens_the_items_of_the_argv_tail_in_field_order() -> None:
    fixed = {p.name: p.name for p in (*WRITE_CONTEXT.keys, *WRITE_CONTEXT.argv)}
    assert WRITE_CONTEXT.call(**fixed).args[len(WRITE_CONTEXT.argv) :] == []
    assert WRITE_CONTEXT.call(**fixed, turn_ids=["t1", "t2"]).args[len(WRITE_CONTEXT.argv) :] == ["t1", "t2"]
    fixed = {p.name: p.name for p in (*REMEMBER.keys, *REMEMBER.argv)}
    written = [
        {"keywords": "k", "json": "{}", "id": "m1", "created_at": 1.5},
        {"id": "m2", "json": "[]", "created_at": 2.5, "keywords": ""},
    ]
    assert REMEMBER.call(**fixed, memories_written=written).args[len(REMEMBER.argv) :] == [
        "m1",
        "{}",
        1.5,
        "k",
        "m2",
        "[]",
        2.5,
        "",
    ]


@pytest.mark.parametrize(
    ("named", "error"),
    [
        ({"k": 1}, "missing"),
        ({"keyword_count": 1}, "unknown \\['keyword_count'\\]"),
        ({"query": "x"}, "unknown \\['query'\\]"),
    ],
)
def test_a_call_names_what_is_missing_or_unknown(named: dict[str, object], error: str) -> None:
    with pytest.raises(TypeError, match=error):
        RECALL.call(**named)


def test_an_item_of_the_argv_tail_takes_exactly_its_fields() -> None:
    fixed = {p.name: p.name for p in (*REMEMBER.keys, *REMEMBER.argv)}
    with pytest.raises(TypeError, match="memories_written"):
        REMEMBER.call(**fixed, memories_written=[{"id": "m1", "json": "{}"}])


@pytest.mark.parametrize(
    ("keys", "key_tails", "argv", "arg_tail"),
    [
        ((Position("a", ""),), (), (Position("a", ""),), None),  # one name twice
        ((), (KeyTail("x", "", ""), KeyTail("y", "", "")), (), None),  # a tail before another, not counted
        ((), (KeyTail("x", "", "", counted_by="n"), KeyTail("y", "", "")), (), None),  # counted by no ARGV
        ((), (), (), ArgTail("items", "", fields=(Position("a", ""),))),  # items without a name
    ],
)
def test_a_spec_that_cannot_be_called_unambiguously_is_refused(
    keys: tuple[Position, ...], key_tails: tuple[KeyTail, ...], argv: tuple[Position, ...], arg_tail: ArgTail | None
) -> None:
    with pytest.raises(ValueError):
        ScriptSpec("x/lua/broken.lua", "", keys, argv, "", key_tails, arg_tail)
