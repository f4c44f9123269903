"""What a dropped tool result keeps: the identifiers and values an agent acts on next, each under its path.

An agent passes ids, codes, amounts, dates and names from a result to a call several steps later, so a digest that
says "bookings: 3 items" loses the booking it will cancel. Here a result (JSON, `key: value` lines, a table or prose)
is rendered compactly with its structure kept as paths ("payment_methods: card_9920117 (brand=visa, last_four=3311)")
and, when that is too long, with less detail a level at a time: long prose goes first, then plain words, until only
identifiers and numbers are left; lists are cut last, saying how many items went ("+12 more flights"). No rule names
a tool: what to keep is judged by a value's shape and its key.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import orjson

from turnstream.text.prose import shorten

TOOL_DIGEST_CHARS = 640
"""At most this much of a dropped tool result stays in its fact: about 150–200 tokens of ids and values."""
LONG_TEXT_CHARS = 80
"""A string longer than this is prose (a description, a policy excerpt), not a value: the first detail to go."""
SHORT_TEXT_CHARS = 24
"""A string up to this long without an id in it is a plain value (a name, a status, a city)."""
SPARSE_TABLE = 0.75
"""A list of objects is laid as a table when at least this share of its cells hold a value."""
_LIST_CAPS = (12, 8, 5, 3, 2, 1)
"""How many items of each list a too-long digest keeps, tried in turn once the detail is at its lowest."""

FAILURE = re.compile(
    r"\b(?:fail(?:ed|s|ure|ing)?|errors?|exception|didn't work|did not work|doesn't work|not working|broken|crash(?:ed)?"
    r"|timed? ?out|timeout|unavailable|refused|denied|invalid|couldn't|could not|unable to|not found|no results)\b"
    r"|失败|报错|错误|出错|不行|没用|无效|超时|异常|不可用|没成功|找不到",
    re.I,
)
"""Cues of a failed attempt, in user, assistant and tool text."""
FAILURE_REACH = 200
"""How far into a prose result a failure's cue counts: an error says so up front; further on, "error" is a word of
the data (a ticket's title, a log line)."""
RESULT_ARROW = " -> "
"""What stands between a call and its result's digest in a fact's text."""
TOOL_CALL_CHARS = 120
"""At most this much of a call's arguments stays beside its result's digest."""

_ID = re.compile(r"[#@]?[A-Za-z0-9][A-Za-z0-9_\-./:+]*")
"""A token with no space: an id, a code, a date, a number, an e-mail, a path (when it also has a digit or capitals)."""
_ID_IN_TEXT = re.compile(
    r"(?<![\w.+\-])[\w.+\-]+@[A-Za-z0-9\-]+(?:\.[A-Za-z0-9\-]+)*\.[A-Za-z]{2,}(?![\w\-])"
    r"|(?<![\w#@])(?:[#@]?(?=[A-Za-z0-9_\-./]*\d)[A-Za-z0-9][A-Za-z0-9_\-./:]*[A-Za-z0-9]|[A-Z]{2,}[A-Z0-9]*(?:-[A-Z0-9]+)+|[A-Z]{2,}[A-Z0-9]+)(?![\w=])"
    r"|(?<![\w/])(?:[\w\-.]+/)+[\w\-]+\.[A-Za-z]{1,6}(?:::\w+)?(?![\w/])"
    r"|[$€£¥]\s?\d[\d,.]*"
)
"""Ids, codes and amounts inside prose: an email address, whole ("mia.li3818@example.com": a lookup by email passes
it, and its local part alone finds no one), a token with a digit ("KX4Q2P", "voucher_5518230", "2024-05-20"), an
all-capitals code ("JFK", "ORD", "KIN-YSVN"), a file's path ("reports/weekly.py", "tests/test_a.py::test_b"), an amount with its
currency sign."""
_DATE_TIME = re.compile(r"^\d{4}-\d{2}-\d{2}(?:[ T]\d{1,2}:\d{2}(?::\d{2})?\S*)?$|^\d{1,2}:\d{2}(?::\d{2})?$")
_ID_KEY = re.compile(r"(?:^|[_\-\s])(?:id|number|no|code|ref|reference|sku)$|Id$|^id$", re.I)
"""A key that names an identifier: `reservation_id`, `orderId`, `flight_number`, `code`."""
_ERROR_KEYS = ("error", "errors", "error_message", "exception", "fault")
_ERROR_STATUSES = frozenset({"error", "failed", "failure", "fail"})
_KEY_VALUE_LINE = re.compile(r"^\s*[-*]?\s*([A-Za-z\u4e00-\u9fff][\w .\-/\u4e00-\u9fff]{0,40}?)\s*[:=：]\s*(.*?)\s*$")
_TABLE_RULE = re.compile(r"^\s*\|?\s*:?-{2,}")


@dataclass(frozen=True, slots=True)
class ToolDigest:
    """A tool result as a fact keeps it."""

    text: str
    """The identifiers and values, with their paths, within the limit; what was left out is said."""
    failed: bool
    """Whether the result reports an error (the text then gives its reason)."""
    entity: str | None
    """The id of the one thing the result is about (its first top-level id field), so a later result about the same
    thing replaces this one; None for lists, searches and prose."""


def digest_tool_result(content: str, limit: int = TOOL_DIGEST_CHARS) -> ToolDigest:
    """The digest of one tool result, at most `limit` characters."""
    data = parse_result(content)
    if data is None:
        return ToolDigest(_prose(content, limit), _prose_failed(content), None)
    error = _error_of(data)
    if error is not None:
        return ToolDigest(shorten(error, limit), True, None)
    if isinstance(data, list) and data:
        # A top-level list is a search's answer: how many it found is a value too.
        count = f"{len(data)} results: "
        return ToolDigest(count + render(data, max(limit - len(count), 0)), False, None)
    return ToolDigest(render(data, limit), False, _entity(data))


def render(data: Any, limit: int) -> str:
    """`data` on one line within `limit` characters, with as much detail as fits."""
    text = ""
    for level in range(4):
        text = _render(data, level, None) or ""
        if len(text) <= limit:
            return text
    for cap in _LIST_CAPS:
        text = _render(data, 3, cap) or ""
        if len(text) <= limit:
            return text
    return shorten(text, limit)


ITEM_SEPARATOR = "; "
"""Between the items of a rendered object (a call's arguments among them): `origin=TYO; date=2024-06-12`."""


def render_arguments(arguments: str) -> str:
    """A call's JSON arguments as `k=v; …` within TOOL_CALL_CHARS (as written when they are not JSON)."""
    try:
        data = orjson.loads(arguments)
    except orjson.JSONDecodeError:
        return shorten(arguments, TOOL_CALL_CHARS)
    return render(data, TOOL_CALL_CHARS)


def values_in(text: str) -> list[str]:
    """The ids, codes and amounts written in `text`, in order, each once."""
    return list(dict.fromkeys(match.group(0).rstrip(".,:") for match in _ID_IN_TEXT.finditer(text)))


def parse_result(content: str) -> Any:
    """A result's structure: its JSON, its `key: value` lines as a dict, its table as a list of rows; None for prose."""
    stripped = content.strip()
    if stripped[:1] in ("{", "[", '"') or stripped[:1].isdigit():
        try:
            return orjson.loads(stripped)
        except orjson.JSONDecodeError:
            pass
    lines = [line for line in stripped.splitlines() if line.strip()]
    if len(lines) < 2:
        return None
    return _table(lines) or _key_values(lines)


def _table(lines: list[str]) -> list[dict[str, str]] | None:
    """Rows of a Markdown table, or of tab- or comma-separated lines under a header."""
    if lines[0].lstrip().startswith("|"):
        rows = [[cell.strip() for cell in line.strip().strip("|").split("|")] for line in lines]
        rows = [row for row in rows if not _TABLE_RULE.match("|".join(row))]
    else:
        sep = "\t" if "\t" in lines[0] else ","
        rows = [[cell.strip() for cell in line.split(sep)] for line in lines]
    header, body = rows[0], rows[1:]
    if len(header) < 2 or not body or any(len(row) != len(header) for row in body):
        return None
    return [dict(zip(header, row, strict=True)) for row in body]


def _key_values(lines: list[str]) -> dict[str, str] | None:
    """`key: value` lines as a dict when most lines are such; continuation lines join the value before them."""
    pairs: dict[str, str] = {}
    matched = 0
    last = None
    for line in lines:
        match = _KEY_VALUE_LINE.match(line)
        if match:
            matched += 1
            last = match.group(1).strip()
            pairs[last] = match.group(2)
        elif last is not None:
            pairs[last] = f"{pairs[last]} {line.strip()}".strip()
    return pairs if matched >= 2 and 2 * matched >= len(lines) else None


def _error_of(data: Any) -> str | None:
    """The reason a structured result gives for failing, or None when it did not fail."""
    if not isinstance(data, dict):
        return None
    for key in _ERROR_KEYS:
        if data.get(key):
            reason = data[key]
            return reason if isinstance(reason, str) else render(reason, TOOL_DIGEST_CHARS)
    if str(data.get("status", "")).lower() in _ERROR_STATUSES:
        return render(data, TOOL_DIGEST_CHARS)
    return None


def _prose_failed(content: str) -> bool:
    return bool(FAILURE.search(content[:FAILURE_REACH]))


def _prose(content: str, limit: int) -> str:
    """Prose cut to `limit`, the ids and amounts from the part cut away listed after it."""
    text = shorten(content, limit)
    if len(text) == len(" ".join(content.split())):
        return text
    kept = set(values_in(text))
    rest = [value for value in values_in(content) if value not in kept]
    if not rest:
        return text
    tail = ", ".join(rest)
    head = shorten(content, max(limit // 2, limit - len(tail) - 3))
    return shorten(f"{head} [{tail}]", limit)


def _entity(data: Any) -> str | None:
    if not isinstance(data, dict):
        return None
    for key, value in data.items():
        if isinstance(value, (str, int)) and not isinstance(value, bool) and _ID_KEY.search(str(key)):
            text = str(value)
            return text if _is_id(text) else None
    return None


def _is_id(text: str) -> bool:
    """Whether a string is one token that identifies something: it has a digit, or is a capitals code."""
    return (
        0 < len(text) <= 64
        and _ID.fullmatch(text) is not None
        and (any(ch.isdigit() for ch in text) or (len(text) >= 2 and text.isupper()))
    )


def _rank(key: str | None, value: str) -> int:
    """How long a string stays as detail drops (levels 0–3): ids and dates to the end, prose first."""
    if _is_id(value) or _DATE_TIME.match(value) or (key is not None and _ID_KEY.search(key) and len(value) <= 64):
        return 3
    if len(value) <= SHORT_TEXT_CHARS:
        return 2
    return 1 if len(value) <= LONG_TEXT_CHARS else 0


def _scalar(key: str | None, value: Any, level: int) -> str | None:
    """A scalar as kept at `level`, or None when it goes."""
    if value is None or value == "" or (isinstance(value, bool) and level > 0):
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return f"{value:.2f}".rstrip("0").rstrip(".") if value != int(value) else str(int(value))
    if isinstance(value, int):
        return str(value)
    text = " ".join(str(value).split())
    rank = _rank(key, text)
    if rank >= level:
        return text if rank else shorten(text, LONG_TEXT_CHARS)
    ids = values_in(text)  # prose that goes still keeps the ids written in it
    return " ".join(ids) if ids else None


def _render(data: Any, level: int, cap: int | None, key: str | None = None) -> str | None:
    if isinstance(data, dict):
        return _render_dict(data, level, cap)
    if isinstance(data, list):
        return _render_list(data, level, cap, key)
    return _scalar(key, data, level)


def _render_dict(data: dict[Any, Any], level: int, cap: int | None) -> str | None:
    if data and all(_is_id(str(k)) for k in data):
        # Keyed by id ({"card_9920117": {...}}): the keys are the values an agent passes, as a list's ids are.
        items = [{"id": k, **_without(v, k)} if isinstance(v, dict) else {"id": k, "value": v} for k, v in data.items()]
        return _render_list(items, level, cap, None)
    parts = []
    for key, value in data.items():
        name = str(key)
        shown = _render(value, level, cap, name)
        if shown is None:
            continue
        if isinstance(value, dict):
            parts.append(f"{name}: ({shown})")
        elif isinstance(value, list):
            parts.append(f"{name}: {shown}")
        else:
            parts.append(f"{name}={shown}" if name else shown)
    return ITEM_SEPARATOR.join(parts) if parts else None


def _without(item: dict[Any, Any], value: Any) -> dict[Any, Any]:
    """`item` less the fields that repeat `value` (an object's own id under its key)."""
    return {k: v for k, v in item.items() if v != value}


def _render_list(items: list[Any], level: int, cap: int | None, key: str | None) -> str | None:
    rows = _flat_rows(items)
    if rows is not None:
        return _render_table(rows, level, cap, key)
    shown = [text for text in _items(items, level, cap, key) if text]
    if not shown:
        return None
    return ", ".join(_capped(shown, cap, key))


def _capped(shown: list[str], cap: int | None, key: str | None) -> list[str]:
    """The first `cap` items, and how many went."""
    if cap is None or len(shown) <= cap:
        return shown
    return [*shown[:cap], f"+{len(shown) - cap} more" + (f" {key}" if key else "")]


def _flat_rows(items: list[Any]) -> list[dict[str, Any]] | None:
    """Objects of one list as rows of scalars (nested objects as dotted columns, lists of scalars joined); None when
    the items are not all such objects, or are fewer than two."""
    if len(items) < 2 or not all(isinstance(item, dict) for item in items):
        return None
    rows = []
    for item in items:
        row: dict[str, Any] = {}
        if not _flatten(item, "", row):
            return None
        rows.append(row)
    columns = {column for row in rows for column in row}
    if sum(len(row) for row in rows) < SPARSE_TABLE * len(columns) * len(rows):
        return None  # objects of different kinds: a table of empty cells says less than each object alone
    return rows


def _flatten(item: dict[Any, Any], prefix: str, row: dict[str, Any]) -> bool:
    for key, value in item.items():
        path = f"{prefix}{key}"
        if isinstance(value, dict):
            if prefix or not _flatten(value, f"{path}.", row):
                return False  # deeper than one level: a table would hide the structure
        elif isinstance(value, list):
            if not all(not isinstance(v, (dict, list)) for v in value):
                return False
            row[path] = "/".join(str(v) for v in value)
        else:
            row[path] = value
    return True


def _render_table(rows: list[dict[str, Any]], level: int, cap: int | None, key: str | None) -> str | None:
    """Rows as `common; (column, …): cell, …; cell, …`: a value every row shares is said once, the id column first."""
    columns = list(dict.fromkeys(column for row in rows for column in row))
    common = [c for c in columns if all(c in row for row in rows) and len({_cell(row[c]) for row in rows}) == 1]
    varying = [c for c in columns if c not in common]
    ids = [c for c in varying if _ID_KEY.search(c.rsplit(".", 1)[-1])]
    varying = ids[:1] + [c for c in varying if c not in ids[:1]]
    cells = [[_scalar(c, row.get(c), level) for c in varying] for row in rows]
    kept = [i for i, column in enumerate(varying) if any(cells_of[i] is not None for cells_of in cells)]
    shared = [f"{c}={shown}" for c in common if (shown := _scalar(c, rows[0][c], level)) is not None]
    parts = ["; ".join(shared)] if shared else []
    if kept:
        header = ", ".join(varying[i] for i in kept)
        lines = _capped([", ".join(row[i] or "-" for i in kept) for row in cells], cap, key)
        parts.append(f"({header}): " + "; ".join(lines))
    return "; ".join(parts) if parts else None


def _cell(value: Any) -> str:
    return orjson.dumps(value).decode()


def _items(items: list[Any], level: int, cap: int | None, key: str | None) -> Iterator[str | None]:
    for item in items:
        if isinstance(item, dict):
            yield _labelled(item, level, cap)
        elif isinstance(item, list):
            inner = _render_list(item, level, cap, key)
            yield f"[{inner}]" if inner else None
        else:
            yield _scalar(key, item, level)


def _labelled(item: dict[Any, Any], level: int, cap: int | None) -> str | None:
    """A list's object as `label (k=v, …)`: its id up front, as an agent names it, the rest after it."""
    label_key: Any = next(
        (
            k
            for k, v in item.items()
            if isinstance(v, (str, int)) and not isinstance(v, bool) and (k == "" or _ID_KEY.search(str(k)))
        ),
        None,
    )
    rest = _without(item, item[label_key]) if label_key is not None else item
    inner = _render_dict(rest, level, cap) if rest else None
    if label_key is None:
        return f"({inner})" if inner else None
    label = str(item[label_key])
    return f"{label} ({inner})" if inner else label
