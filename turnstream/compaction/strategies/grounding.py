"""Whether an extracted fact is grounded in the turns it came from: every identifier and number in it occurs there.

A model may reword what it extracts, never invent: a fact naming a booking code, an amount, a date or any other
number that its source turns do not hold is discarded, so no invented identifier reaches a prompt. Pure text
rules, no model: the check runs on every LLM extraction, in the stream's summarizer and in `compact --llm`.

What counts as an identifier (`identifiers`): a run of ASCII letters and digits, joined by `-`, `_`, `.`, `/`
or `:` (`TYO-10477`, `voucher_5518230`, `2024-05-01`, `14:30`, `3.5`), that holds a digit, an underscore, or
five or more capital letters and nothing lower-case (a letter-only booking reference such as `QXJKLM`). Both
texts are read in NFKC form (full-width digits are digits) with the commas of thousands taken out (`20,000`
is `20000`), so a copied amount matches however the source grouped its digits.

An identifier occurs in the source when it is one of the source's runs, or a part of one cut at its joiners
(`10477` and `TYO-10477` occur in `TYO-10477`; `05-01` in `2024-05-01`), but never a piece of a longer word or
number (`929` does not occur in `CA929`, nor `3` in `3.5`). Anything reformatted (`May 1` for `2024-05-01`,
`kx4q2p` for `KX4Q2P`) does not occur: the prompt asks for verbatim copies, and a discarded fact costs only
the model's wording, since the offline facts of the same turns stand.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Iterator, Sequence
from typing import NamedTuple

from turnstream.compaction.strategies.base import Fact
from turnstream.text.chat import Message, content_text, tool_calls

_RUN = re.compile(r"[A-Za-z0-9]+(?:[-_./:][A-Za-z0-9]+)*")
_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}(?!\d))")
_JOINER = re.compile(r"[-_./:]")
MIN_CODE_LETTERS = 5
"""Capital letters a letter-only run needs to count as a code: fewer are acronyms (USD, API, VIP) a model may
write on its own."""
MAX_PARTS = 8
"""Longest part sequence of a source run indexed besides the whole run: a path or a blob of hundreds of parts
would otherwise index quadratically many pieces."""


class Grounded(NamedTuple):
    """Facts split by the check: those whose identifiers all occur in the source, and the others."""

    kept: tuple[Fact, ...]
    discarded: tuple[Fact, ...]


def normalized(text: str) -> str:
    """`text` as both sides are compared: NFKC, and no commas between groups of thousands."""
    return _THOUSANDS.sub("", unicodedata.normalize("NFKC", text))


def is_identifier(run: str) -> bool:
    """Whether a run must occur verbatim in the source: it holds a digit or an underscore, or is a capital code."""
    if "_" in run or any(char.isdigit() for char in run):
        return True
    return run.isupper() and sum(char.isalpha() for char in run) >= MIN_CODE_LETTERS


def identifiers(text: str) -> list[str]:
    """The identifiers and numbers of `text`, normalized, in order."""
    return [run for run in _RUN.findall(normalized(text)) if is_identifier(run)]


def _pieces(run: str) -> Iterator[str]:
    """`run` and its parts cut at joiners, up to MAX_PARTS parts long; a dot between digits (a decimal, a
    version) does not cut, so `3` is not a piece of `3.5`."""
    yield run
    cuts = [m.start() for m in _JOINER.finditer(run) if not _decimal_point(run, m.start())]
    bounds = [(-1, *cuts), (*cuts, len(run))]
    starts, ends = [b + 1 for b in bounds[0]], list(bounds[1])
    for first in range(len(starts)):
        for last in range(first, min(first + MAX_PARTS, len(ends))):
            yield run[starts[first] : ends[last]]


def _decimal_point(run: str, index: int) -> bool:
    return run[index] == "." and run[index - 1].isdigit() and run[index + 1].isdigit()


def source_terms(texts: Iterable[str]) -> frozenset[str]:
    """Everything an identifier may be to occur in `texts`: their runs and the runs' pieces."""
    return frozenset(piece for text in texts for run in _RUN.findall(normalized(text)) for piece in _pieces(run))


def is_grounded(text: str, terms: frozenset[str]) -> bool:
    """Whether every identifier of `text` occurs in the source whose `source_terms` are `terms`."""
    return all(identifier in terms for identifier in identifiers(text))


def turn_texts(messages: Sequence[Message]) -> Iterator[str]:
    """What the turns say, as a model extracting from them reads it: contents, tool names and arguments."""
    for message in messages:
        if not isinstance(message, dict):
            continue
        yield content_text(message.get("content"))
        for _, name, arguments in tool_calls(message):
            yield name
            yield arguments


def split_grounded(facts: Iterable[Fact], source: Sequence[Message]) -> Grounded:
    """`facts` split into those whose text's identifiers all occur in the `source` turns, and the others.

    Only the text is checked: it is what a prompt shows; the key is a slot name the merge matches on.
    """
    terms = source_terms(turn_texts(source))
    kept: list[Fact] = []
    discarded: list[Fact] = []
    for fact in facts:
        (kept if is_grounded(fact.text, terms) else discarded).append(fact)
    return Grounded(tuple(kept), tuple(discarded))
