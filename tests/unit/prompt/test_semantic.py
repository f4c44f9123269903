"""The semantic share of the memory block: what a read asks, how a pool is ranked without the model, and the
fixed place its hits take after the best lexical snippets."""

from __future__ import annotations

from turnstream.prompt.query import prompt_query
from turnstream.prompt.read import PoolEntry
from turnstream.prompt.recalled import LEXICAL_FIRST, choose_turns
from turnstream.prompt.semantic import POOL, SEMANTIC_HITS, TermsOnly, by_terms
from turnstream.schemas.archive import ArchiveEntry
from turnstream.settings import Settings

DAY = 1_700_000_000.0


def entry(n: int, text: str = "", session: str = "s1") -> ArchiveEntry:
    return ArchiveEntry(
        f"e{n}", session, n, "user", "Maya", DAY + n, text or f"Maya mentioned the weather again ({n})."
    )


def test_a_read_asks_no_pool_without_a_semantic_side_and_the_question_s_terms_with_one() -> None:
    plain = prompt_query("What martial arts has John done?", None, Settings())
    assert plain.archive.pool == 0 and plain.semantic is None and plain.archive.semantic_terms == ()
    asked = prompt_query("What martial arts has John done?", None, Settings(), TermsOnly())
    assert asked.archive.pool == POOL and asked.archive.semantic_terms == tuple(asked.archive.terms)
    assert asked.archive.vector_tag == "" and asked.semantic is not None


def test_small_talk_asks_nothing_of_either_index() -> None:
    assert prompt_query("hi!", None, Settings(), TermsOnly()).semantic is None


def test_without_the_model_the_pool_is_ranked_by_the_semantic_terms_weights() -> None:
    pool = [
        PoolEntry(entry(1), 3.0, 0.0, None),
        PoolEntry(entry(2), 0.0, 900.0, None),
        PoolEntry(entry(3), 1.0, 1500.0, None),
    ]
    assert [(e.id, score) for e, score in by_terms(pool)] == [
        ("e3", 1500.0),
        ("e2", 900.0),
    ]  # BM25 alone: not its share
    many = [PoolEntry(entry(n), 0.0, float(n), None) for n in range(1, SEMANTIC_HITS + 5)]
    assert len(by_terms(many)) == SEMANTIC_HITS


def test_the_semantic_hits_come_after_the_best_lexical_snippets_and_before_the_rest() -> None:
    # hits without neighbours, each line as long as the semantic hit's
    lexical = [(entry(10 * n, f"I started pottery class {n} here."), 10.0 - n) for n in range(LEXICAL_FIRST + 3)]
    kickboxing = entry(999, "I started boxing class 0 here.")
    room_for = 0
    for size in range(50, 2000, 10):  # the smallest room that takes the first snippets and one more line
        chosen = choose_turns(lexical, set(), size, "en", semantic=[(kickboxing, 0.6)])
        if len(chosen) == LEXICAL_FIRST + 1:
            room_for = size
            break
    assert room_for, "no room took exactly the first snippets and one more"
    chosen = choose_turns(lexical, set(), room_for, "en", semantic=[(kickboxing, 0.6)])
    assert kickboxing.id in {t.entry.id for t in chosen}  # the share's hit, not the sixth lexical one
    assert {t.entry.id for t in chosen} - {kickboxing.id} == {e.id for e, _ in lexical[:LEXICAL_FIRST]}


def test_without_a_semantic_share_the_block_is_chosen_as_before() -> None:
    lexical = [(entry(10 * n), 10.0 - n) for n in range(8)]
    assert choose_turns(lexical, set(), 400, "en") == choose_turns(lexical, set(), 400, "en", semantic=[])
