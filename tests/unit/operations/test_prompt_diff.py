"""The pure prompt diff of `turnstream diff`: sides reduced from prompts with provenance, deltas by key, the text diff."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from turnstream.operations.prompt_diff import (
    Changed,
    PromptSide,
    RecalledRef,
    diff_prompts,
    keyed_delta,
    prompt_lines,
    prompt_side,
)
from turnstream.prompt.assemble import Prompt
from turnstream.schemas.context import ContextDoc
from turnstream.text.tokens import count_messages

pytestmark = pytest.mark.unit

texts = st.text(alphabet="abc xyz\n", max_size=12)
keyed = st.dictionaries(st.sampled_from("pqrstu"), texts, max_size=5)
refs = st.dictionaries(
    st.sampled_from(["e1", "e2", "e3", "e4"]),
    st.builds(lambda s, p: (s, p), st.sampled_from(["s1", "s2"]), st.integers(0, 9)),
    max_size=4,
)
messages = st.lists(
    st.builds(
        lambda role, text: {"role": role, "content": text}, st.sampled_from(["system", "user", "assistant"]), texts
    ),
    max_size=5,
)


@st.composite
def sides(draw: st.DrawFn) -> PromptSide:
    shown = draw(messages)
    recalled = {key: RecalledRef(key, *where) for key, where in draw(refs).items()}
    return PromptSide(shown, count_messages(shown), draw(keyed), draw(keyed), recalled)


@given(sides())
def test_a_prompt_against_itself_differs_in_nothing(side: PromptSide) -> None:
    diff = diff_prompts(side, side)
    assert diff.identical and diff.changes == 0 and diff.text == []


@given(sides(), sides())
def test_swapping_the_sides_swaps_what_is_added_and_removed(live: PromptSide, shadow: PromptSide) -> None:
    there, back = diff_prompts(live, shadow), diff_prompts(shadow, live)
    assert (there.facts.added, there.facts.removed) == (back.facts.removed, back.facts.added)
    assert (there.memories.added, there.memories.removed) == (back.memories.removed, back.memories.added)
    assert (there.recalled.gained, there.recalled.lost) == (back.recalled.lost, back.recalled.gained)
    assert [(c.id, c.live, c.shadow) for c in there.memories.changed] == [
        (c.id, c.shadow, c.live) for c in back.memories.changed
    ]
    assert (there.live_tokens, there.shadow_tokens) == (back.shadow_tokens, back.live_tokens)
    assert there.identical == back.identical


@given(sides(), sides())
def test_the_text_diff_is_empty_exactly_when_the_prompts_read_alike(live: PromptSide, shadow: PromptSide) -> None:
    diff = diff_prompts(live, shadow)
    assert (diff.text == []) == (prompt_lines(live.messages) == prompt_lines(shadow.messages))


def test_a_delta_sorts_what_is_added_removed_and_changed_by_key() -> None:
    delta = keyed_delta({"a": "1", "b": "2", "c": "3"}, {"b": "2", "c": "4", "d": "5"})
    assert delta.added == {"d": "5"}
    assert delta.removed == {"a": "1"}
    assert delta.changed == [Changed("c", "3", "4")]
    assert delta.count == 3


def context(**fields: Any) -> ContextDoc:
    base: dict[str, Any] = {
        "session_id": "s1",
        "version": 3,
        "last_turn_id": "t3",
        "updated_at": 1_700_000_000.0,
        "messages": [{"role": "user", "content": "hi"}],
        "tokens": {"before": 10, "after": 10, "budget": 100},
        "facts": [
            {"type": "fact", "text": "Budget is 900 EUR.", "key": "budget", "source_seq": 1},
            {"type": "fact", "text": "Likes aisle seats.", "key": "pref:aisle", "source_seq": 2},
        ],
    }
    return ContextDoc.model_validate(base | fields)


def prompt(sources: list[list[dict[str, Any]]] | None, recalled: list[dict[str, Any]] | None = None) -> Prompt:
    shown = [{"role": "system", "content": "block"}, {"role": "user", "content": "where to?"}]
    return Prompt(shown, recalled or [], [], False, {}, sources)  # type: ignore[arg-type]


def test_a_side_holds_the_facts_its_block_shows_with_the_documents_text_and_what_it_recalled() -> None:
    sources = [
        [
            {"kind": "fact", "session": "s1", "position": 1, "key": "budget"},
            {"kind": "fact", "session": "s1", "position": 9, "key": "gone"},  # not in the document: left out
            {"kind": "memory", "id": "m1", "score": 1.0},
            {"kind": "archive", "id": "e7", "session": "s1", "position": 4, "score": 2.5},
        ],
        [{"kind": "question"}],
    ]
    side = prompt_side(prompt(sources, [{"id": "m1", "type": "fact", "text": "Lives in Porto."}]), context())
    assert side.facts == {"budget": "Budget is 900 EUR."}
    assert side.memories == {"m1": "Lives in Porto."}
    assert side.recalled == {"e7": RecalledRef("e7", "s1", 4)}
    assert side.tokens == count_messages(list(side.messages))


def test_a_side_without_a_context_shows_no_facts() -> None:
    side = prompt_side(prompt([[{"kind": "fact", "session": "s1", "position": 1, "key": "budget"}], []]), None)
    assert side.facts == {}


def test_a_prompt_without_provenance_is_refused() -> None:
    with pytest.raises(ValueError, match="provenance=True"):
        prompt_side(prompt(None), context())


def test_the_text_diff_names_both_sides_and_shows_the_changed_line() -> None:
    live = PromptSide([{"role": "user", "content": "a\nb"}], 5, {}, {}, {})
    shadow = PromptSide([{"role": "user", "content": "a\nc"}], 5, {}, {}, {})
    text = diff_prompts(live, shadow, ("live", "shadow-x")).text
    assert text[:2] == ["--- live", "+++ shadow-x"]
    assert "-b" in text and "+c" in text
