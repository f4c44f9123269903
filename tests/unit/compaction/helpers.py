"""Message builders, test strategies, a ReAct trace generator and an independent checker of every rule."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import orjson
from hypothesis import strategies as st

from turnstream.compaction import MARKERS
from turnstream.compaction.compactor import CompactionResult
from turnstream.compaction.marker import block_text
from turnstream.compaction.messages import validate_messages
from turnstream.compaction.strategies.base import Digest, Fact
from turnstream.text.tokens import REPLY_PRIMING_TOKENS, count_message, count_messages

Message = dict[str, Any]


def sys_(text: str = "You are a careful travel agent.") -> Message:
    return {"role": "system", "content": text}


def user(text: str) -> Message:
    return {"role": "user", "content": text}


def thought(text: str) -> Message:
    return {"role": "assistant", "content": text}


def call(*ids: str, content: str | None = None, args: str = '{"q": "tokyo"}') -> Message:
    calls = [{"id": i, "type": "function", "function": {"name": "search", "arguments": args}} for i in ids]
    return {"role": "assistant", "content": content, "tool_calls": calls}


def result(call_id: str, text: str = "ok") -> Message:
    return {"role": "tool", "tool_call_id": call_id, "content": text}


class Recorder:
    """Records every span it is given; its block only grows (one fact per span, up to a cap)."""

    name = "recorder"

    def __init__(self, cap: int = 3) -> None:
        self.spans: list[tuple[int, list[Message]]] = []
        self.times: list[tuple[float | None, ...]] = []
        """The times each span came with."""
        self.cap = cap

    def apply(self, digest: Digest, dropped: Sequence[Message], first_seq: int) -> Digest:
        self.spans.append((first_seq, list(dropped)))
        self.times.append(digest.times)
        facts = digest.facts
        if len(facts) < self.cap:
            facts = (*facts, Fact("event", f"{len(dropped)} turns dropped", f"span-{len(facts)}", first_seq))
        return replace(digest, summary=digest.summary or "Earlier turns were dropped.", facts=facts)


# --- trace generation -------------------------------------------------------------------------

_EN = "flight hotel budget tokyo kyoto train museum ticket price dinner booking weather plan day".split()
_ZH = ["航班", "酒店", "预算", "东京", "京都", "新干线", "博物馆", "门票", "价格", "晚餐", "预订", "天气", "行程"]


@st.composite
def texts(draw: st.DrawFn, language: str, max_words: int = 40) -> str:
    words = draw(st.lists(st.sampled_from(_ZH if language == "zh" else _EN), min_size=1, max_size=max_words))
    return ("" if language == "zh" else " ").join(words)


@st.composite
def react_traces(draw: st.DrawFn, max_steps: int = 14) -> tuple[list[Message], str]:
    """A ReAct conversation in one language: thoughts, single and parallel calls, user interjections,
    sometimes a greeting before the first user message, sometimes huge tool output, sometimes a call in flight."""
    language = draw(st.sampled_from(["en", "zh"]))
    text = texts(language)
    messages: list[Message] = [sys_(draw(text)) for _ in range(draw(st.integers(0, 2)))]
    if draw(st.booleans()) and draw(st.booleans()):
        messages.append(thought(draw(text)))  # a greeting before the first user message
    messages.append(user(draw(text)))
    calls = 0
    for _ in range(draw(st.integers(0, max_steps))):
        kind = draw(st.sampled_from(["user", "thought", "call", "call", "answer", "system"]))
        if kind == "call":
            ids = [f"call_{calls + k}" for k in range(draw(st.integers(1, 3)))]
            calls += len(ids)
            messages.append(call(*ids, content=draw(st.none() | text)))
            for call_id in draw(st.permutations(ids)):
                huge = draw(st.integers(0, 9)) == 0
                messages.append(result(call_id, draw(texts(language, 400)) * (8 if huge else 1)))
        elif kind == "system":
            messages.append(sys_(draw(text)))
        elif kind == "user":
            messages.append(user(draw(text)))
        else:
            messages.append(thought(draw(text)))
    if draw(st.booleans()):  # a call still waiting for some of its results
        ids = [f"call_{calls + k}" for k in range(draw(st.integers(1, 3)))]
        messages.append(call(*ids, content=draw(st.none() | text)))
        messages.extend(result(i, draw(text)) for i in ids[: draw(st.integers(0, len(ids) - 1))])
    return messages, language


# --- the rules, checked from the outside --------------------------------------------------------


def anchor_count(messages: list[Message]) -> int:
    """Leading system messages, then everything up to the first user message, inclusive."""
    for index, message in enumerate(messages):
        if message["role"] == "user":
            return index + 1
    return next((i for i, m in enumerate(messages) if m["role"] != "system"), len(messages))


def units(messages: list[Message], start: int) -> list[tuple[int, int]]:
    """[start, end) of each atomic unit from `start`: one message, or a call with its results."""
    spans, index = [], start
    while index < len(messages):
        end = index + 1
        if messages[index].get("tool_calls"):
            while end < len(messages) and messages[end]["role"] == "tool":
                end += 1
        spans.append((index, end))
        index = end
    return spans


def is_trimmed(kept: Message, original: Message) -> bool:
    same_rest = {k: v for k, v in kept.items() if k != "content"} == {
        k: v for k, v in original.items() if k != "content"
    }
    content = kept.get("content")
    note = isinstance(content, str) and ("trimmed" in content or "已截断" in content)
    return same_rest and note and count_message(kept) < count_message(original)


def check_rules(
    messages: list[Message],
    res: CompactionResult,
    budget: int,
    budget_messages: int | None = None,
    *,
    language: str | None = None,
    monotone_block: bool = False,
) -> None:
    """Assert every compaction rule on one result."""
    out = list(res.messages)
    n_anchor = anchor_count(messages)
    assert res.tokens.before == count_messages(messages)
    assert res.tokens.after == count_messages(out)
    assert res.tokens.budget == budget
    # every kept message names its conversation position and its cost; the added marker and block name no position
    assert list(res.message_tokens) == [count_message(m) for m in out]
    assert len(res.positions) == len(out)
    for kept, position in zip(out, res.positions):
        if position is None:
            assert kept["role"] == "system" and out.index(kept) in (res.marker_index, (res.marker_index or 0) + 1)
        else:
            assert kept is messages[position] or is_trimmed(kept, messages[position])
    assert [p for p in res.positions if p is not None] == sorted(p for p in res.positions if p is not None)
    if not messages:
        assert out == [] and res.dropped == 0
        return
    # 1. anchors pinned, as the very same objects (a greeting pinned with them may have been trimmed)
    assert len(out) >= n_anchor
    for kept, original in zip(out[:n_anchor], messages[:n_anchor]):
        assert kept is original or (original["role"] == "assistant" and is_trimmed(kept, original))
    markers = [i for i, m in enumerate(out) if m.get("content") in MARKERS.values()]
    if res.dropped == 0:
        # 2. nothing dropped: no marker, nothing added; only a trimmed message may differ
        assert markers == [] and res.marker_index is None and len(out) == len(messages)
        for kept, original in zip(out, messages, strict=True):
            assert kept is original or is_trimmed(kept, original)
        if res.tokens.before <= budget and (budget_messages is None or len(messages) <= budget_messages):
            assert all(a is b for a, b in zip(out, messages, strict=True))
        return
    # 6. exactly one marker, right after the anchors, system role, in the conversation's language
    assert markers == [n_anchor] == [res.marker_index]
    assert out[n_anchor]["role"] == "system"
    if language:
        assert out[n_anchor]["content"] == MARKERS[language]  # type: ignore[index]
    # 8. one summary/facts block right after the marker, iff the digest says something
    tail_start = n_anchor + 1
    headings = ("[Summary of the compressed history]", "[Key facts]", "[已压缩历史摘要]", "[关键信息]")
    candidate = out[tail_start] if tail_start < len(out) else {}
    is_block = candidate.get("role") == "system" and str(candidate.get("content")).startswith(headings)
    block = candidate if is_block and not any(candidate is m for m in messages) else None
    full_block = block_text(res.digest, language or "en")
    if block is not None:
        # the block opens with a heading of the full block (a block with tool data may have given up its summary)
        assert full_block and block["content"].split("\n")[0] in full_block.split("\n")
        tail_start += 1
    tail = out[tail_start:]
    # 3. the tail is a contiguous suffix of the input: same objects, or trimmed copies
    assert tail, "the newest message is always kept"
    first = len(messages) - len(tail)
    for kept, original in zip(tail, messages[first:], strict=True):
        assert kept is original or is_trimmed(kept, original)
        if kept is original:
            assert orjson.dumps(kept) == orjson.dumps(original)
    assert res.dropped == first - n_anchor
    # 4. atomic alignment: the cut is a unit boundary, and the output is a valid conversation
    assert first in {start for start, _ in units(messages, n_anchor)}
    validate_messages(out)
    # budget: respected, or only the anchors, the marker and the newest unit are left
    newest_start = units(messages, n_anchor)[-1][0]
    within = res.tokens.after <= budget and (budget_messages is None or len(out) <= budget_messages)
    assert within or (first == newest_start and block is None)
    # 3 and 5. longest tail: one more unit (e.g. the step's thought) would not have fit
    untrimmed = all(kept is original for kept, original in zip(tail, messages[first:]))
    if monotone_block and untrimmed and within and first > n_anchor:
        previous = next(start for start, end in units(messages, n_anchor) if end == first)
        longer = [
            *out[: n_anchor + 1],
            *([{"role": "system", "content": full_block}] if full_block else []),
            *messages[previous:],
        ]
        assert count_messages(longer) > budget or (budget_messages is not None and len(longer) > budget_messages)


def tokens_of(messages: list[Message]) -> int:
    return sum(count_message(m) for m in messages) + REPLY_PRIMING_TOKENS
