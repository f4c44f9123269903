"""A correction reaches every memory that restates the value it corrects (pure).

The key facts take a correction in themselves (compaction/strategies/keyinfo.py): the corrected fact is replaced,
and its memory, keyed by its slot, is rewritten. A memory of other words can still say the old value as it was
said: the session's summary memory above all, since the rolling summary keeps what was said ("user: Also my
hometown is Tampere, and I prefer aisle seats."). Such a text is put right here: each sentence of it that states a
value one of the session's facts replaces is followed by that fact ("… aisle seats. → Correction: I prefer window
seats, not aisle seats."), so the old value is never read without the new one beside it. The sentence itself stays:
a summary is history, and what else it says (the hometown) is still true.

A sentence states a value a fact replaces when
- it holds a value the fact names as wrong ("not aisle seats", "instead of Rome", "不是上海"), the same test by
  which the facts drop what a correction names; or
- a clause of it, said by the user, sets the slot the fact holds: a named one, which holds one value ("My budget is
  2000 euros" and "make that 2500" share `budget`), or one a correction took over ("I prefer aisle seats" and
  "Actually, I prefer window seats" share `pref:aisle-seats`);
and its line does not already say what the fact says.

The session core applies it (the worker's side): memory/__init__.py leaves it out, since it loads the key-information
rules, which the gateway SDK (it imports memory/ for the profile) must not load.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from functools import lru_cache

from turnstream.compaction.strategies.base import Fact

# keyinfo.py's own tests of a correction, reused so that a memory follows the very rule the facts follow.
from turnstream.compaction.strategies.keyinfo import OLD_VALUE, classify, content_words, corrects, fact_body
from turnstream.text.locale import LOCALES
from turnstream.text.prose import clauses, keywords, sentences

BESIDE = " → "
"""Between a sentence and the fact that replaces a value it states: read as "became", in any language."""
_NOT_THE_USERS_LABELS = tuple(
    locale.summary_labels[role] for locale in LOCALES.values() for role in ("assistant", "step", "tool")
)
"""Summary lines of others than the user: what they say names no slot of the user's (the facts take only the
user's word for those), though it may still repeat an old value."""
_REMEMBERED_FACTS = 4096
"""Fact texts (their old values, what they state) and summary sentences (the slots they set) whose reading is
remembered: a session's facts and its summary's lines are read again at every summary memory it writes, each fact
against every line."""
_MAX_LABEL_CHARS = 40
"""A speaker's name before ": " is short; a longer head is a sentence's own colon."""


@lru_cache(maxsize=_REMEMBERED_FACTS)
def old_values(text: str) -> tuple[frozenset[str], ...]:
    """The keywords of each value a correction in `text` names as wrong ("not aisle seats" → {aisle, seats}); none
    when no sentence of it is a correction ("I do not eat pork" names nothing as wrong)."""
    return tuple(
        old
        for sentence in sentences(text)
        if corrects(sentence)
        for match in OLD_VALUE.finditer(sentence)
        if (old := frozenset(keywords(match.group(1) or match.group(2) or "")))
    )


@lru_cache(maxsize=_REMEMBERED_FACTS)
def stated(text: str) -> frozenset[str]:
    """What a fact says, stemmed and without cue words: its content words, less the old values its corrections name
    ("Correction: I prefer window seats, not aisle seats." → {window, seat})."""
    said = " ".join(OLD_VALUE.sub(" ", sentence) if corrects(sentence) else sentence for sentence in sentences(text))
    return content_words(said)


def _speaker(line: str) -> tuple[str, bool]:
    """(the line's words without its speaker label, whether the user may have said them)."""
    for label in _NOT_THE_USERS_LABELS:
        if line.startswith(label):
            return line[len(label) :], False
    for colon in (": ", "："):
        head, found, rest = line.partition(colon)
        if found and len(head) <= _MAX_LABEL_CHARS:
            return rest, True
    return line, True


def replaces(fact: Fact, sentence: str, users: bool) -> bool:
    """Whether `fact` replaces a value `sentence` states: a value it names as wrong, or (`users`: the user may have
    said the sentence) the slot one of the sentence's clauses sets."""
    said = frozenset(keywords(sentence))
    if any(old <= said for old in old_values(fact.text)):
        return True
    # a named slot holds one value; a generic key is a statement's first words, which a restatement of other words
    # ("…; it started yesterday" after "…; it started on Monday") shares without replacing anything: it counts only
    # when the fact took it over from the statement it replaced, its own words setting another slot
    return (
        users and fact.key in _slots(sentence) and (":" not in fact.key or fact.key not in _slots(fact_body(fact.text)))
    )


@lru_cache(maxsize=_REMEMBERED_FACTS)
def _slots(sentence: str) -> frozenset[str]:
    """The slots the clauses of `sentence` set, as the facts key them when the user says it."""
    return frozenset(kind_key[1] for clause in clauses(sentence) if (kind_key := classify(clause, "user")))


def _beside(fact: Fact, line: str) -> bool:
    """Whether `line` already says what `fact` says (the correction itself, or the new value in other words)."""
    new = stated(fact.text)
    return new <= content_words(line) if new else fact_body(fact.text) in line


def reconcile(text: str, facts: Sequence[Fact]) -> str:
    """`text` (a summary: statements, one a line) with each sentence that states a value one of `facts` replaces
    followed by that fact, once a line; lines that say no replaced value are as they were."""
    return "\n".join(_reconcile_line(line, facts) for line in text.split("\n"))


def _reconcile_line(line: str, facts: Sequence[Fact]) -> str:
    words, users = _speaker(line)
    out, at, pending = [], 0, list(facts)
    for sentence in sentences(words):
        due = [fact for fact in pending if replaces(fact, sentence, users) and not _beside(fact, line)]
        if due:
            end = line.find(sentence, at) + len(sentence)
            out.append(line[at:end] + "".join(BESIDE + fact.text for fact in due))
            at = end
            pending = [fact for fact in pending if fact not in due]
    return "".join(out) + line[at:]


def restating(facts: Sequence[Fact], learned: Sequence[Fact]) -> list[Fact]:
    """Of `facts` (a session's, before it `learned` some), those of other slots that state a value one of `learned`
    replaces, each with that fact beside its text. Their memories outlive them (a correction drops from the facts
    every one that holds the value it names, but rewrites only one slot's memory), so they are rewritten too."""
    slots = {fact.key for fact in learned}
    return [
        replace(fact, text=text)
        for fact in facts
        if fact.key not in slots and (text := reconcile(fact.text, learned)) != fact.text
    ]


def outdated(text: str, facts: Sequence[Fact]) -> bool:
    """Whether `text` states a value one of `facts` replaces without it beside: a memory of it must be rewritten."""
    return reconcile(text, facts) != text
