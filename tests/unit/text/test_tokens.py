"""Token counts summed over lines are the encoder's own counts, whatever the text."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from turnstream.text.tokens import count_text, encoding, keep_newest_text, truncate_text

# What makes cl100k's pre-tokenizer merge across a line break: punctuation before it, runs of newlines,
# spaces around it, Unicode spaces (some of which Python calls whitespace and the encoder does not), CJK, digits.
PIECES = [
    "a",
    "Zürich",
    " ",
    "  ",
    "\n",
    "\n\n",
    "\r\n",
    " \n",
    "\n ",
    ".",
    "!?",
    "'s",
    "'ll",
    "-",
    "(",
    ")",
    "：",
    "。",
    "\u3000",
    "\u00a0",
    "\u2028",
    "\u0085",
    "\x1c",
    "\u200b",
    "我们",
    "😀",
    "1",
    "2345",
    "\t",
]


def encoded(text: str) -> int:
    return len(encoding().encode(text, disallowed_special=()))


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=60))
def test_a_count_summed_over_lines_is_the_count_of_the_whole(parts: list[str]) -> None:
    text = "".join(parts)
    assert count_text(text) == encoded(text)


def test_a_long_block_is_counted_exactly_and_its_lines_are_remembered() -> None:
    lines = [f"- (constraint) line {i}: budget at most {i * 37} euros, no red-eye flights." for i in range(60)]
    text = "Summary of earlier turns:\nUser: planning a trip.\n\nKey facts:\n" + "\n".join(lines)
    assert len(text) > 2048  # past the whole-text memo: only the line-by-line path counts it
    assert count_text(text) == encoded(text)
    changed = text + "\n- (fact) one more line."
    assert count_text(changed) == encoded(changed)


def test_truncation_keeps_a_text_that_fits_and_cuts_one_that_does_not() -> None:
    text = "first line.\nsecond line!\n" * 20
    tokens = encoded(text)
    assert truncate_text(text, tokens) == text and keep_newest_text(text, tokens) == text
    assert encoded(truncate_text(text, tokens - 5)) <= tokens - 5
    assert keep_newest_text(text, 10).startswith("…") and len(keep_newest_text(text, 10)) < len(text)


def newest_by_full_encoding(text: str, max_tokens: int) -> str:
    """keep_newest_text as it was first written: the whole text encoded, the newest tokens decoded."""
    if encoded(text) <= max_tokens:
        return text
    tokens = encoding().encode(text, disallowed_special=())
    tail = encoding().decode_bytes(tokens[len(tokens) - max(max_tokens - 1, 0) :]).decode("utf-8", errors="ignore")
    return "…" + tail.lstrip()


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from([*PIECES, "\ud83d\ude00", "\udc00"]), max_size=60), st.integers(0, 40))
def test_the_newest_text_taken_line_by_line_is_the_newest_text_of_the_whole_encoding(
    parts: list[str], max_tokens: int
) -> None:
    text = "".join(parts)
    assert keep_newest_text(text, max_tokens) == newest_by_full_encoding(text, max_tokens)
