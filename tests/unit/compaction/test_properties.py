"""Property tests over generated ReAct traces: every rule, for many budgets, batch and incremental alike."""

from __future__ import annotations

import orjson
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from turnstream.compaction.compactor import compact
from turnstream.compaction.incremental import SessionCompactor
from turnstream.compaction.strategies.offline import build_strategy
from turnstream.session.row_format import compactor_bytes, compactor_from_bytes, compactor_from_row, compactor_row
from turnstream.settings import Settings

from .helpers import Recorder, anchor_count, check_rules, is_trimmed, react_traces

budgets = st.integers(20, 1500)
message_caps = st.none() | st.integers(2, 30)
fast = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@fast
@given(trace=react_traces(), budget=budgets, cap=message_caps)
def test_every_rule_holds_for_a_growing_block(trace: tuple[list, str], budget: int, cap: int | None) -> None:
    messages, language = trace
    res = compact(messages, budget, strategy=Recorder(), budget_messages=cap)
    check_rules(messages, res, budget, cap, language=language, monotone_block=True)


@fast
@given(trace=react_traces(), budget=budgets)
def test_every_rule_holds_without_a_strategy(trace: tuple[list, str], budget: int) -> None:
    messages, language = trace
    res = compact(messages, budget)
    check_rules(messages, res, budget, language=language, monotone_block=True)
    assert res.summary == "" and res.facts == ()


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(trace=react_traces(), budget=st.integers(200, 1500))
def test_every_rule_holds_with_the_default_strategies(trace: tuple[list, str], budget: int) -> None:
    messages, language = trace
    res = compact(messages, budget, strategy=build_strategy(Settings()))
    check_rules(messages, res, budget, language=language)


@fast
@given(trace=react_traces(), budget=budgets, cap=message_caps, data=st.data())
def test_incremental_equals_batch_across_serialization(
    trace: tuple[list, str], budget: int, cap: int | None, data: st.DataObject
) -> None:
    messages, _ = trace
    headroom = budget * data.draw(st.sampled_from([0, 0, 1, 2])) // 10  # a worker's cut goes a tenth or two below
    batch_strategy, session_strategy = Recorder(), Recorder()
    batch = compact(messages, budget, strategy=batch_strategy, budget_messages=cap, headroom_tokens=headroom)
    session = SessionCompactor(budget, budget_messages=cap, headroom_tokens=headroom)
    returned = []
    for message in messages:
        returned.extend(session.append(message, strategy=session_strategy))
        if data.draw(st.booleans()):  # a worker restart: state travels through the Table as bytes
            blob = compactor_bytes(session)
            session = compactor_from_bytes(blob)
            assert compactor_bytes(session) == blob
    incremental = session.result()
    assert orjson.dumps(incremental.to_dict()) == orjson.dumps(batch.to_dict())
    assert incremental.digest == batch.digest
    assert batch_strategy.spans == session_strategy.spans
    # append() returned exactly the dropped messages, in order (as kept: possibly trimmed)
    n_anchor = anchor_count(messages)
    for returned_message, original in zip(returned, messages[n_anchor : n_anchor + batch.dropped], strict=True):
        assert orjson.dumps(returned_message) == orjson.dumps(original) or is_trimmed(returned_message, original)
    assert len(returned) == batch.dropped


@settings(max_examples=40, deadline=None)
@given(trace=react_traces(), budget=budgets)
def test_an_unchanged_session_survives_a_round_trip(trace: tuple[list, str], budget: int) -> None:
    messages, _ = trace
    session = SessionCompactor(budget)
    for message in messages:
        session.append(message, strategy=Recorder())
    restored = compactor_from_bytes(compactor_bytes(session))
    assert orjson.dumps(restored.result().to_dict()) == orjson.dumps(session.result().to_dict())


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(trace=react_traces(), budget=st.integers(200, 1500), share=st.sampled_from([0.05, 0.1, 0.25]))
def test_a_cut_goes_below_the_budget_by_the_headroom_and_the_head_holds_between_cuts(
    trace: tuple[list, str], budget: int, share: float
) -> None:
    messages, language = trace
    headroom = int(budget * share)
    session = SessionCompactor(budget, strategy=Recorder(), headroom_tokens=headroom)
    head: tuple = ()
    for message in messages:
        dropped = session.append(message)
        res = session.result()
        # over the budget only when nothing is left to drop: the newest step alone, or the pinned anchors alone
        assert res.tokens.after <= budget or len(session.units) <= 1
        tail_start = len(res.messages) - session.tail_count
        if dropped:
            assert res.tokens.after <= budget - headroom or len(session.units) <= 1
        elif res.marker_index is not None and len(session.units) > 1:  # a lone oversized step cuts the block itself
            assert res.messages[:tail_start] == head, "the head changed without a cut"
        head = res.messages[:tail_start]
    check_rules(messages, session.result(), budget, language=language)


def test_a_row_from_before_the_headroom_restores_without_one() -> None:
    session = SessionCompactor(300, headroom_tokens=30)
    state = compactor_row(session)
    assert state["budget"] == [300, None, 30] and compactor_from_row(state).headroom_tokens == 30
    state["budget"] = [300, None]
    assert compactor_from_row(state).headroom_tokens == 0
