"""The fast correction test says what the whole `_CORRECTION` pattern says, for every cue it holds."""

from __future__ import annotations

import re

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from turnstream.compaction.strategies.keyinfo import (
    _CORRECTION,
    _CORRECTION_CUES,
    _CORRECTION_OPENINGS,
    corrects,
)


def _alternatives(pattern: str) -> list[str]:
    """The top-level alternatives of `pattern` (none of its cues holds a `|` inside a group at its top)."""
    parts, depth, start, escaped = [], 0, 0, False
    for index, char in enumerate(pattern):
        if escaped:
            escaped = False
        elif char == "\\":
            escaped = True
        elif char in "([":
            depth += 1
        elif char in ")]":
            depth -= 1
        elif char == "|" and depth == 0:
            parts.append(pattern[start:index])
            start = index + 1
    return [*parts, pattern[start:]]


CUES = _alternatives(_CORRECTION_CUES) + _alternatives(_CORRECTION_OPENINGS)
around = st.text(alphabet=st.sampled_from(list("abno tI'.,!?-5我不是对")), max_size=12)


def test_the_cues_split_into_whole_alternatives() -> None:
    assert len(CUES) > 20
    for cue in CUES:
        re.compile(cue, re.I)  # a split inside a group or a class would leave it unbalanced


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), before=around, after=around)
def test_a_sentence_with_any_cue_is_judged_as_the_whole_pattern_judges_it(
    data: st.DataObject, before: str, after: str
) -> None:
    cue = data.draw(st.sampled_from(CUES))
    said = data.draw(st.from_regex(re.compile(cue, re.I), fullmatch=True))
    for sentence in (said, before + said, said + after, before + said + after):
        assert corrects(sentence) == bool(_CORRECTION.search(sentence)), sentence


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=80))
def test_any_text_is_judged_as_the_whole_pattern_judges_it(text: str) -> None:
    assert corrects(text) == bool(_CORRECTION.search(text))


def test_everyday_corrections_and_plain_statements() -> None:
    for sentence in (
        "No, I prefer aisle seats.",
        "Oops, I meant aisle seats.",
        "I don't eat meat anymore.",
        "我不再喝咖啡。",
        "Make that 2,500.",
    ):
        assert corrects(sentence), sentence
    for sentence in ("I went hiking with my dog yesterday.", "我们周末去了海边。", "Nothing beats a good book."):
        assert not corrects(sentence), sentence
