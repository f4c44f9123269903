"""The Lua scripts' calling convention, one declared spec per script: KEYS and ARGV by name, in order.

Lua and Python agree by position only, so the positions live here and nowhere else:

- the Python callers build a call by name (`RECALL.call(context=..., k=..., keyword_sets=[...])`) and get the
  KEYS and ARGV lists in the declared order;
- each .lua file opens with a header generated from its spec (`local KEY = {context = 1, ...}`,
  `local FIXED_KEYS = 8`), and its body reads `KEYS[KEY.context]`, `ARGV[FIXED_ARGV + 1 ...]`, never a number;
- docs/scripts.md, the table for gateways in other languages, is generated from the same specs.

`python -m turnstream.redis.render` rewrites both generated parts; tests/unit/schemas/test_scripts.py
fails when either differs from the specs, when a script reads a position its spec does not declare, and when a
script has no spec or a spec no script.

Why the spec is Python and the Lua header generated, not the other way round (a comment header in each .lua
parsed by Python): the callers need names, tails, item groups and derived counts as typed data, which a
comment header would have to encode in a small language of its own and parse on every import; the .lua
files must stay whole as shipped (a gateway elsewhere `SCRIPT LOAD`s them from the wheel), so the header is
written into each file rather than prepended at load time. Changing a script's arguments is then: edit its
spec here, run the command, read the new name in the .lua body (`ARGV[ARG.new_name]`) and pass it by name where
the script is called; no position is written by hand anywhere.

Key patterns use redis/keys.py's notation: P the topic prefix, O the owner, S the session key.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from importlib.resources import files
from pathlib import PurePosixPath
from typing import Any, NamedTuple

ScriptArg = str | bytes | int | float


class Call(NamedTuple):
    """One call of a script: KEYS and ARGV in the declared order."""

    keys: list[str]
    args: list[ScriptArg]


@dataclass(frozen=True, slots=True)
class Position:
    """One fixed position of KEYS or ARGV, or one argument of an ARGV tail's item."""

    name: str
    doc: str
    pattern: str = ""
    """The key's name (KEYS only), as in redis/keys.py."""


@dataclass(frozen=True, slots=True)
class KeyTail:
    """Keys after the fixed ones, as many as the call needs."""

    name: str
    doc: str
    pattern: str
    counted_by: str = ""
    """The ARGV that holds how many there are; a call fills it. Needed by every tail but the last."""


@dataclass(frozen=True, slots=True)
class ArgTail:
    """Arguments after the fixed ones: single values, or items of `fields` arguments each."""

    name: str
    doc: str
    item: str = ""
    """What one item is called (the Lua header's table of its offsets), when items have fields."""
    fields: tuple[Position, ...] = ()


@dataclass(frozen=True, slots=True)
class ScriptSpec:
    """What one script takes and returns."""

    path: str
    """The .lua file, relative to the turnstream package."""
    purpose: str
    keys: tuple[Position, ...]
    argv: tuple[Position, ...]
    reply: str
    key_tails: tuple[KeyTail, ...] = ()
    arg_tail: ArgTail | None = None

    def __post_init__(self) -> None:
        names = [p.name for p in self.keys] + [t.name for t in self.key_tails] + [p.name for p in self.argv]
        if self.arg_tail:
            names.append(self.arg_tail.name)
        if len(set(names)) != len(names):
            raise ValueError(f"{self.name}: a name is declared twice in {names}")
        argv = {p.name for p in self.argv}
        for n, tail in enumerate(self.key_tails):
            if tail.counted_by not in argv and (tail.counted_by or n < len(self.key_tails) - 1):
                raise ValueError(f"{self.name}: key tail {tail.name} needs an ARGV that counts it")
        if self.arg_tail and bool(self.arg_tail.item) != bool(self.arg_tail.fields):
            raise ValueError(f"{self.name}: an ARGV tail of items names its item and their fields")

    @property
    def name(self) -> str:
        return PurePosixPath(self.path).stem

    def text(self) -> str:
        """The script as shipped in the wheel."""
        return _text(self.path)

    def counted(self) -> dict[str, str]:
        """ARGV name -> the key tail it counts: filled by `call`, never passed."""
        return {tail.counted_by: tail.name for tail in self.key_tails if tail.counted_by}

    def call(self, **named: Any) -> Call:
        """KEYS and ARGV for one call, from every fixed position by name and the tails (empty when left out)."""
        counted = self.counted()
        fixed = {p.name for p in self.keys} | {p.name for p in self.argv if p.name not in counted}
        tails = {t.name for t in self.key_tails} | ({self.arg_tail.name} if self.arg_tail else set())
        unknown, missing = named.keys() - fixed - tails, fixed - named.keys()
        if unknown or missing:
            raise TypeError(f"{self.name}: unknown {sorted(unknown)}, missing {sorted(missing)}")
        keys = [named[p.name] for p in self.keys]
        for key_tail in self.key_tails:
            keys.extend(named.get(key_tail.name, ()))
        values = {**named, **{count: len(named.get(tail, ())) for count, tail in counted.items()}}
        args: list[ScriptArg] = [values[p.name] for p in self.argv]
        if self.arg_tail:
            args.extend(self._tail_args(self.arg_tail, named.get(self.arg_tail.name, ())))
        return Call(keys, args)

    def _tail_args(self, tail: ArgTail, items: Sequence[Any]) -> list[ScriptArg]:
        """The ARGV tail flat: its values, or each item's fields in declared order."""
        fields = [f.name for f in tail.fields]
        if not fields:
            return list(items)
        out: list[ScriptArg] = []
        for item in items:
            if item.keys() != set(fields):
                raise TypeError(f"{self.name}: an item of {tail.name} has {sorted(item)}, not {sorted(fields)}")
            out.extend(item[name] for name in fields)
        return out


@cache
def _text(path: str) -> str:
    return files("turnstream").joinpath(path).read_text(encoding="utf-8")


_ARCHIVE_KEYS = (
    Position("archive", "short entry id -> entry JSON (one applied turn)", "P:arcent:{O}"),
    Position("positions", "`S#<position>` -> short entry id", "P:arcat:{O}"),
    Position("entry_terms", "short entry id -> `length<TAB>S#<position><TAB>term term …`", "P:arcrec:{O}"),
    Position(
        "stats",
        "total_length, next (the newest entry's number), first (the oldest's, or a gap before it)",
        "P:arcmeta:{O}",
    ),
    Position(
        "dictionary",
        "term -> its packed postings `id:weight,…` (a rare term), or `<df> <size> <least>`: its "
        "document frequency, its postings key's size and the lowest weight the key kept at its last cut (a term "
        "with a postings key); and `hash table`, a field no term can be that keeps the hash in Redis's hash "
        "table encoding",
        "P:arcdict:{O}",
    ),
    Position("vectors", "short entry id -> `<model tag><TAB><semantic terms><TAB><int8 vector>`", "P:arcvec:{O}"),
    Position("semantic", "semantic term -> its best postings `id:weight,…`, highest first", "P:arcsem:{O}"),
)

RECALL = ScriptSpec(
    path="redis/lua/recall.lua",
    purpose="The read path in one call, every key under the owner's hash tag: a session's context, its owner's "
    "profile, the top-k typed memories for the query keywords that this session was not given in its last "
    "`window` prompts, and the archived turns that best match the query (BM25) with the turns around them.",
    keys=(
        Position("context", "the session's context hash", "P:ctx:{O}:S"),
        Position("profile", "the owner's profile hash {text, version}", "P:profile:{O}"),
        Position("memories", "memory id -> memory JSON", "P:mem:{O}"),
        Position("access", "memory id -> access count", "P:memaccess:{O}"),
        Position(
            "injected",
            "the memory ids of the session's prompts, newest first, one comma-joined list each",
            "P:injected:{O}:S",
        ),
        Position("archive", "short archive entry id -> entry JSON", "P:arcent:{O}"),
        Position("positions", "archive positions: `S#<position>` -> short entry id", "P:arcat:{O}"),
        Position(
            "entry_terms",
            "short archive entry id -> `length<TAB>S#<position><TAB>terms`: where a hit is",
            "P:arcrec:{O}",
        ),
        Position(
            "dictionary",
            "the archive's term dictionary: term -> packed postings or `<df> <size> <least>`",
            "P:arcdict:{O}",
        ),
        Position("vectors", "short entry id -> `<model tag><TAB><semantic terms><TAB><int8 vector>`", "P:arcvec:{O}"),
        Position("semantic", "semantic term -> its best postings `id:weight,…`, highest first", "P:arcsem:{O}"),
    ),
    key_tails=(
        KeyTail(
            "keyword_sets",
            "one per query keyword (lower-case words, `keywords` in turnstream/text/prose.py)",
            "P:memkw:{O}:<keyword>",
            counted_by="keyword_count",
        ),
        KeyTail(
            "postings",
            "one per query term (stemmed words and CJK bigrams, `query_terms` in "
            "turnstream/text/terms.py): the postings key of a term the dictionary gives a frequency",
            "P:arcpost:{O}:<term>",
        ),
    ),
    argv=(
        Position("k", "memories returned at most"),
        Position("window", "how many of the session's latest prompts count: what they were given is not given again"),
        Position("ttl", "seconds the injected list lives after a recording call"),
        Position("now", "unix time, for the memories' recency"),
        Position(
            "record",
            "1: count the memories as injected and raise their access counts, in a session that has a context (one "
            "without records nothing); 0: only look",
        ),
        Position("keyword_count", "how many keyword sets follow the fixed keys"),
        Position("hits", "archived turns returned at most, best first"),
        Position("postings_per_term", "highest-weighted postings read per scored term"),
        Position("scored_terms", "rarest query terms scored"),
        Position("neighbours", "turns of the same session returned on each side of a hit"),
        Position("terms", "the query terms separated by spaces, in the order of the postings keys"),
        Position("weight_scale", "what the stored integer weights are multiplied by"),
        Position(
            "pool",
            "candidates taken from each side, the lexical scores and the semantic terms' postings, for "
            "the semantic share of the block (0: none, the reply's last two parts are empty)",
        ),
        Position(
            "semantic_terms",
            "the query's semantic terms separated by spaces (its own terms, and with a model "
            "its nearest vocabulary terms)",
        ),
        Position(
            "vector_tag", "the tag of the reader's model: the pool's vectors of that model are returned (empty: none)"
        ),
    ),
    reply="{doc, profile text, profile version, {memory JSON, access count, score, …}, archive JSON, pool JSON, "
    "{vector, …}}: the archive part is one JSON array of [score, entry] pairs, hits best first, each followed by "
    "its neighbours (score 0), so the client parses one string instead of a hundred replies; the pool is a JSON "
    "array of [lexical score, semantic score, entry] (an entry the archive part holds already: its place there, from "
    "0) and the vectors its entries' vectors of `vector_tag`, in its order (false where there is none).",
)

REMEMBER = ScriptSpec(
    path="redis/lua/remember.lua",
    purpose="Upsert memories of one owner and, optionally, compare-and-set the owner's profile; all or nothing. "
    "Then hold the owner to `cap` memories and keep every memory key of the owner on one expiry.",
    keys=(
        Position("memories", "memory id -> memory JSON", "P:mem:{O}"),
        Position("created", "memory id -> created_at", "P:memcreated:{O}"),
        Position("profile", "the owner's profile hash {text, version}", "P:profile:{O}"),
        Position("access", "memory id -> access count", "P:memaccess:{O}"),
    ),
    key_tails=(
        KeyTail(
            "keyword_sets",
            "the keyword sets the caller expects the call to touch: those of the memories it "
            "writes, old keywords and new (a Redis Cluster requires every key declared)",
            "P:memkw:{O}:<keyword>",
        ),
    ),
    argv=(
        Position("keyword_prefix", "the keyword sets' prefix, `P:memkw:{O}:`"),
        Position("expected_version", "the profile version the new text was computed from; '' leaves the profile alone"),
        Position("profile_text", "the new profile text"),
        Position("ttl", "seconds every memory key of the owner lives after this write"),
        Position("cap", "memories kept at most"),
        Position(
            "evict_chunk",
            "memories evicted beyond the excess once the cap is passed, so the next writes need "
            "no eviction (an eviction reads every memory's access count and age)",
        ),
    ),
    arg_tail=ArgTail(
        "memories_written",
        "per memory written",
        item="memory",
        fields=(
            Position("id", "memory id"),
            Position("json", "memory JSON"),
            Position("created_at", "created_at, kept if the memory has one already"),
            Position("keywords", "its keywords joined by '\\n'"),
        ),
    ),
    reply="{1, the ids of the memories it evicted...} when applied, 0 when the profile moved past the expected "
    "version, else the names of the keyword sets the call would touch that KEYS does not: those of the memories it "
    "evicts, of every memory on an expiry restart, or changed by another writer; the caller adds them and calls "
    "again. Nothing is written unless the reply starts with 1.",
)

REPLACE_PROFILE = ScriptSpec(
    path="redis/lua/replace_profile.lua",
    purpose="Compare-and-set an owner's profile text on its version.",
    keys=(
        Position("profile", "the owner's profile hash {text, version}", "P:profile:{O}"),
        Position("memories", "the owner's memories, whose expiry the profile shares", "P:mem:{O}"),
    ),
    argv=(
        Position("expected_version", "the version the text replaces (0 when none yet)"),
        Position("text", "the new profile text"),
    ),
    reply="1 when written (version + 1), 0 when the stored version differs.",
)

ARCHIVE_APPEND = ScriptSpec(
    path="redis/lua/archive_append.lua",
    purpose="Append turns to one owner's archive and index them for BM25; an entry already there is left alone.",
    keys=_ARCHIVE_KEYS,
    key_tails=(
        KeyTail(
            "postings",
            "the postings keys of the call's terms named in `keyed`, in its order: a term with a key, or one "
            "near to getting one, as far as the caller knows",
            "P:arcpost:{O}:<term>",
        ),
    ),
    argv=(
        Position("ttl", "seconds every archive key of the owner lives after this write"),
        Position("cap", "entries kept at most"),
        Position(
            "evict_chunk", "entries reported over the cap beyond the excess, so the next appends need no eviction"
        ),
        Position("k1", "BM25 k1"),
        Position("b", "BM25 b"),
        Position("weight_scale", "a weight is stored as the integer nearest weight × weight_scale"),
        Position("packed_max", "postings a term keeps packed in its dictionary field; one more moves them to its key"),
        Position("postings_kept", "postings a postings key holds at most, the highest-weighted (a read takes fewer)"),
        Position("postings_trimmed", "postings a full postings key is cut back to, so that most additions need no cut"),
        Position("terms", "the call's terms separated by spaces"),
        Position("keyed", "the indexes, counting from 1 into `terms`, of the terms whose postings keys are named"),
        Position(
            "entries",
            "the entries appended, one JSON array of objects: `id` the stable id (entry_id: a turn whose position "
            "holds it already is not added), `json` the entry JSON, `record` its terms record "
            "(`length<TAB>S#<position><TAB>term term …`), `field` its position field (`S#<position>`), `length` "
            "its length in terms, `postings` its [index, frequency, …] pairs flat, index counting from 1 into "
            "`terms`: one argument for the call, however many entries and terms",
        ),
    ),
    reply="{status, the count of the terms to name from now on, those terms, then short id, terms record and "
    "stable id of every entry over the cap, oldest first}. Status is the number of entries added, or -1 when a "
    "postings key the call needs was not named: then nothing is written, and the caller calls again naming the "
    "terms returned. The terms returned are those with a key, or with half of `packed_max` postings, that were "
    "not named, so the call in which a term gets its key seldom has to be made twice. The caller evicts the "
    "entries over the cap with their postings (it alone can name their postings keys).",
)

ARCHIVE_EVICT = ScriptSpec(
    path="redis/lua/archive_evict.lua",
    purpose="Remove entries from one owner's archive together with their postings; safe to repeat.",
    keys=_ARCHIVE_KEYS,
    key_tails=(KeyTail("postings", "the postings keys of the evicted entries' terms", "P:arcpost:{O}:<term>"),),
    argv=(Position("terms", "the evicted entries' terms separated by spaces, in the order of the postings keys"),),
    arg_tail=ArgTail(
        "entries",
        "per entry evicted",
        item="entry",
        fields=(
            Position("id", "short entry id"),
            Position("field", "its position field, `S#<position>`"),
            Position("length", "its length in terms"),
            Position("terms", "its terms as indexes counting from 1 into `terms`, separated by spaces"),
        ),
    ),
    reply="the number of entries removed.",
)

ARCHIVE_EMBED = ScriptSpec(
    path="redis/lua/archive_embed.lua",
    purpose="Store archived turns' sentence vectors and index them under their semantic terms; an entry no longer "
    "archived is skipped, one already embedded by the same model left alone, one of another model re-indexed.",
    keys=(
        Position("archive", "short entry id -> entry JSON", "P:arcent:{O}"),
        Position("positions", "`S#<position>` -> short entry id", "P:arcat:{O}"),
        Position("vectors", "short entry id -> `<model tag><TAB><semantic terms><TAB><int8 vector>`", "P:arcvec:{O}"),
        Position("semantic", "semantic term -> its best postings `id:weight,…`, highest first", "P:arcsem:{O}"),
    ),
    argv=(
        Position("ttl", "seconds both keys live after this write (the archive's)"),
        Position("tag", "the model's tag"),
        Position("postings_max", "postings a semantic term keeps, the highest-weighted"),
    ),
    arg_tail=ArgTail(
        "entries",
        "per entry embedded",
        item="entry",
        fields=(
            Position("field", "its position field, `S#<position>`"),
            Position("id", "its stable id (entry_id): a turn whose position holds another entry is skipped"),
            Position("vector", "its int8 vector (4-byte scale, then one byte a dimension)"),
            Position("terms", "its semantic terms as `term:weight` separated by spaces, weight = cosine × 1000"),
        ),
    ),
    reply="the number of entries embedded.",
)

WRITE_CONTEXT = ScriptSpec(
    path="redis/lua/write_context.lua",
    purpose="Compare-and-set one session's context document on its version, atomically.",
    keys=(
        Position("context", "the session's context hash", "P:ctx:{O}:S"),
        Position("applied", "turn id -> the version that applied it (same hash tag, so same slot)", "P:applied:{O}:S"),
    ),
    argv=(
        Position("version", "the document's version"),
        Position("doc", "the document JSON"),
        Position("last_turn_id", "the newest turn it applies"),
        Position("ttl", "seconds both keys live after this write"),
        Position("dedup_window", "turn ids kept, the newest"),
        Position("updates", "the channel the version is published on, `P:updates:S`"),
    ),
    arg_tail=ArgTail("turn_ids", "turn ids applied by this version"),
    reply="1 when written, 0 when the stored version is as new or newer (a replay: no-op).",
)

SCRIPTS = (RECALL, REMEMBER, REPLACE_PROFILE, ARCHIVE_APPEND, ARCHIVE_EVICT, ARCHIVE_EMBED, WRITE_CONTEXT)
