"""What redis/scripts.py's specs generate: each .lua file's header and docs/scripts.md.

`python -m turnstream.redis.render` rewrites both from a source checkout; a new script's .lua file
may start without a header (its spec in SCRIPTS gives it one).
"""

from __future__ import annotations

import textwrap
from pathlib import Path

from turnstream.redis.scripts import SCRIPTS, ScriptSpec

REGENERATE = "python -m turnstream.redis.render"
PACKAGE = Path(__file__).resolve().parents[1]
DOCS = PACKAGE.parent / "docs" / "scripts.md"
HEADER_END = "-- (end of the generated header)"
WIDTH = 112


def key_rows(spec: ScriptSpec) -> list[tuple[str, str, str, str]]:
    """(position, name, key pattern, what it holds) for every key; a tail's position in terms of the ARGV counting it."""
    rows = [(str(n), p.name, p.pattern, p.doc) for n, p in enumerate(spec.keys, 1)]
    start, argv = f"{len(spec.keys) + 1}", [p.name for p in spec.argv]
    for tail in spec.key_tails:
        if tail.counted_by:
            count = f"ARGV[{argv.index(tail.counted_by) + 1}]"
            rows.append(
                (f"{start} … {len(spec.keys)} + {count}", tail.name, tail.pattern, f"{tail.doc}; {count} of them")
            )
            start = f"{start} + {count}"
        else:
            rows.append((f"{start} …", tail.name, tail.pattern, tail.doc))
    return rows


def arg_rows(spec: ScriptSpec) -> list[tuple[str, str, str]]:
    """(position, name, meaning) for every argument; an item's fields as offsets from the item's start, j from 0."""
    counted = spec.counted()
    rows = [
        (str(n), p.name, f"{p.doc} (the number of {counted[p.name]})" if p.name in counted else p.doc)
        for n, p in enumerate(spec.argv, 1)
    ]
    tail, first = spec.arg_tail, len(spec.argv) + 1
    if tail and tail.fields:
        size = len(tail.fields)
        rows.append((f"{first} …", tail.name, f"{tail.doc}, {size} arguments each; j counts them from 0"))
        rows += [(f"{first + n} + {size}j", f"{tail.name}[j].{f.name}", f.doc) for n, f in enumerate(tail.fields)]
    elif tail:
        rows.append((f"{first} …", tail.name, tail.doc))
    return rows


def _comment(text: str) -> list[str]:
    return textwrap.wrap(text, WIDTH, initial_indent="-- ", subsequent_indent="--   ")


def _table(entries: dict[str, int], prefix: str) -> str:
    """A Lua table of name -> position, broken over lines when it runs past WIDTH."""
    fields = ", ".join(f"{name} = {value}" for name, value in entries.items())
    if len(prefix) + len(fields) + 2 <= WIDTH:
        return prefix + "{" + fields + "}"
    return prefix + "{\n" + "\n".join(textwrap.wrap(fields, WIDTH, initial_indent="  ", subsequent_indent="  ")) + "\n}"


def lua_header(spec: ScriptSpec) -> str:
    """The lines a script starts with: what it is, its positions as comments, then as Lua names."""
    lines = [
        "-- GENERATED HEADER, from this script's spec in turnstream/redis/scripts.py: edit the spec, then run",
        f"-- `{REGENERATE}`. The body reads KEYS and ARGV by the names below only.",
    ]
    lines += _comment(spec.purpose)
    lines += [
        line
        for position, name, pattern, doc in key_rows(spec)
        for line in _comment(f"KEYS[{position}] {name}: {pattern}, {doc}")
    ]
    lines += [line for position, name, doc in arg_rows(spec) for line in _comment(f"ARGV[{position}] {name}: {doc}")]
    lines += _comment(f"Returns {spec.reply}")
    lines.append(_table({p.name: n for n, p in enumerate(spec.keys, 1)}, "local KEY = "))
    if spec.key_tails:
        lines.append(f"local FIXED_KEYS = {len(spec.keys)}")
    if spec.argv:
        lines.append(_table({p.name: n for n, p in enumerate(spec.argv, 1)}, "local ARG = "))
    if spec.arg_tail:
        lines.append(f"local FIXED_ARGV = {len(spec.argv)}")
    if spec.arg_tail and spec.arg_tail.fields:
        group = spec.arg_tail.item.upper()
        offsets = {f.name: n for n, f in enumerate(spec.arg_tail.fields)}
        lines += [_table(offsets, f"local {group} = "), f"local {group}_SIZE = {len(offsets)}"]
    return "\n".join([*lines, HEADER_END, ""])


def body(text: str) -> str:
    """A script without its generated header (all of it when it has none yet)."""
    return text.split(HEADER_END + "\n", 1)[1] if HEADER_END in text else text


def docs() -> str:
    """docs/scripts.md."""
    out = [
        "# The Lua scripts: KEYS and ARGV",
        "",
        f"Generated from the specs in `turnstream/redis/scripts.py` by `{REGENERATE}`; edit those, not this file.",
        "",
        "Each script ships in the wheel at the path given: `SCRIPT LOAD` it once and call it with `EVALSHA`, or "
        "`EVAL` it. Positions count from 1, as Lua's `KEYS` and `ARGV` do; `P` is `TURNSTREAM_TOPIC_PREFIX`, `O` "
        "the owner, `S` the session key, each escaped as `turnstream/redis/keys.py` says. Every key of a call "
        "shares the owner's hash tag `{O}`, so a call runs in one slot on a Redis Cluster too. A gateway calls "
        "`recall` only (`record` = 0 only looks); the others are the worker's writes, listed so that every "
        "position is on record.",
    ]
    for spec in SCRIPTS:
        out += [
            "",
            f"## {spec.name}",
            "",
            f"`turnstream/{spec.path}`: {spec.purpose}",
            "",
            "| KEYS | name | key | holds |",
            "|---|---|---|---|",
        ]
        out += [f"| {position} | {name} | `{pattern}` | {doc} |" for position, name, pattern, doc in key_rows(spec)]
        out += ["", "| ARGV | name | meaning |", "|---|---|---|"]
        out += [f"| {position} | {name} | {doc} |" for position, name, doc in arg_rows(spec)] or [
            "| — | | none fixed |"
        ]
        out += ["", f"Returns {spec.reply}"]
    return "\n".join(out) + "\n"


def main() -> None:
    """Rewrite every script's header and docs/scripts.md; print what changed."""
    for spec in SCRIPTS:
        path = PACKAGE / spec.path
        text = path.read_text(encoding="utf-8")
        new = lua_header(spec) + body(text)
        if new != text:
            path.write_text(new, encoding="utf-8")
            print(f"rewrote {path}")
    if not DOCS.exists() or DOCS.read_text(encoding="utf-8") != docs():
        DOCS.write_text(docs(), encoding="utf-8")
        print(f"rewrote {DOCS}")


if __name__ == "__main__":
    main()
