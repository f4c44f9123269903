"""encode_context writes the very bytes ContextDoc(**fields).to_json() writes, without building the model."""

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.support.conversations import react_messages
from turnstream.schemas.context import ContextDoc, encode_context
from turnstream.schemas.turn import Turn
from turnstream.session import CoreConfig, SessionCore
from turnstream.settings import Settings

NOW = 1_700_000_000.0

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53), 2**53) | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=8,
)
messages = st.lists(
    st.fixed_dictionaries(
        {"role": st.sampled_from(["system", "user", "assistant", "tool"]), "content": st.text(max_size=20)},
        optional={"name": st.text(max_size=5), "tool_calls": json_values, "tool_call_id": st.text(max_size=5)},
    ),
    max_size=4,
)
facts = st.lists(
    st.fixed_dictionaries(
        {
            "type": st.sampled_from(["fact", "preference", "constraint"]),
            "text": st.text(max_size=20),
            "key": st.none() | st.text(max_size=8),
            "source_seq": st.none() | st.integers(0, 10_000),
        },
        optional={"confidence": st.floats(0, 1)},  # a strategy's own field
    ),
    max_size=3,
)
numbers = st.integers(0, 10**6)


@given(
    messages=messages,
    facts=facts,
    tenant=st.none() | st.just("acme"),
    updated_at=st.integers(0, 2**31) | st.floats(0, 2e9),
    timings=st.dictionaries(st.sampled_from(["ingest", "compaction", "redis_write"]), numbers | st.floats(0, 1e4)),
    marker=st.none() | st.integers(0, 3),
    summary=st.text(max_size=30),
    counts=st.tuples(numbers, numbers, numbers),
)
def test_the_bytes_are_the_models(
    messages: list[dict[str, Any]],
    facts: list[dict[str, Any]],
    tenant: str | None,
    updated_at: float,
    timings: dict[str, float],
    marker: int | None,
    summary: str,
    counts: tuple[int, int, int],
) -> None:
    fields = {
        "messages": messages,
        "positions": [n if n % 2 else None for n in range(len(messages))],
        "message_tokens": [7] * len(messages),
        "language": "en",
        "marker_index": marker,
        "dropped": 2,
        "summary": summary,
        "facts": facts,
        "tokens": dict(zip(("before", "after", "budget"), counts)),
        "session_id": "s-1",
        "tenant": tenant,
        "version": 3,
        "last_turn_id": "t9",
        "updated_at": updated_at,
        "timings": timings,
    }
    doc = ContextDoc(**fields)
    encoded = encode_context(fields)
    assert encoded.to_json() == doc.to_json()
    assert (encoded.session_key, encoded.version, encoded.last_turn_id) == (
        doc.session_key,
        doc.version,
        doc.last_turn_id,
    )


def test_a_field_the_encoder_is_not_given_is_an_error_not_a_document_without_it() -> None:
    with pytest.raises(KeyError, match="facts"):
        encode_context({name: None for name in ContextDoc.model_fields if name != "facts"})


def test_the_core_writes_what_its_document_says() -> None:
    """A compacted session (marker, summary, facts, tool calls) through the core's two ways of writing it."""
    core = SessionCore(CoreConfig.from_settings(Settings(budget_tokens=300)))
    turns = [
        Turn(turn_id=f"t{n}", session_id="s1", user_id="maya", seq=n, ts=NOW + n, message=message)
        for n, message in enumerate(react_messages(7, 40))
    ]
    state = core.new_state(turns[0])
    for turn in turns:
        core.on_turn(state, turn, NOW)
    assert state.compaction().marker_index is not None
    timings = {"ingest": 1, "compaction": 0.25}
    assert core.encoded_context(state, NOW, timings).to_json() == core.context_doc(state, NOW, timings).to_json()
