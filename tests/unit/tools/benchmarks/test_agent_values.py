"""The agent-values measure on hand-made traces with known answers."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from turnstream.compaction.compactor import KEEP_DIGEST, compact
from turnstream.compaction.marker import marker_tokens
from turnstream.compaction.strategies.offline import offline_strategy
from turnstream.text.tokens import REPLY_PRIMING_TOKENS, count_message, count_messages
from turnstream_tools.benchmarks.agent_values import (
    LangChainTrim,
    anchors_and_tail,
    invariant_breaks,
    kept_tally,
    leaf_values,
    measure_trace,
    needed_values,
    occurs,
    room_label,
)

FILLER = "We compared the options at length and nothing in this sentence is an identifier. " * 12


def call(call_id: str, name: str, **arguments: Any) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}
        ],
    }


def result(call_id: str, value: Any) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id, "content": json.dumps(value)}


TRACE: list[dict[str, Any]] = [
    {"role": "system", "content": "You are a booking agent. Policy: confirm before you change a booking."},
    {"role": "user", "content": "Hi, please change my booking. My id is ann_lee_1234."},
    call("c1", "get_user", user_id="ann_lee_1234"),
    result("c1", {"bookings": ["KX4Q2P", "ZR81LM"], "payment_methods": {"card_9920117": {"brand": "visa"}}}),
    {"role": "assistant", "content": "Which of your two bookings? " + FILLER},
    {"role": "user", "content": "The one in June. " + FILLER},
    {"role": "assistant", "content": "Noted. " + FILLER},
    {"role": "user", "content": "Pay with the visa. " + FILLER},
    {"role": "assistant", "content": "I'll charge card_9920117."},
    # the same call id again, as real logs reuse them
    call("c1", "change_booking", booking="ZR81LM", payment_id="card_9920117", seats=2, confirm=True, note="ok"),
    result("c1", {"booking": "ZR81LM", "status": "changed"}),
]
CALL = 9


def test_leaf_values_take_strings_and_numbers_of_any_depth_but_no_booleans_or_short_ones() -> None:
    arguments = json.dumps({"a": "KX4Q2P", "b": [{"c": 1280.5, "d": True}, "ok", 7], "e": {"f": {"g": "TYO-10477"}}})
    assert leaf_values(arguments) == ["KX4Q2P", "1280.5", "TYO-10477"]
    assert leaf_values("not json") == []


def test_a_value_occurs_as_a_whole_token_and_a_cjk_value_anywhere() -> None:
    assert occurs("120", "price: 120 USD")
    assert not occurs("120", "price: 1200 USD")
    assert not occurs("KX4Q2P", "KX4Q2PZ")
    assert occurs("浅草", "就住浅草那家")


def test_needed_values_are_those_said_before_the_call_and_old_ones_absent_from_the_newest_four() -> None:
    needed = needed_values(TRACE, CALL)
    assert needed.values == ("ZR81LM", "card_9920117")  # seats 2, true and "ok" say nothing
    assert needed.old == {"ZR81LM"}  # card_9920117 is in the message right before the call
    assert needed.tool_only == {"ZR81LM"}


def test_a_value_only_a_dropped_tool_result_held_counts_as_lost() -> None:
    history = TRACE[:CALL]
    # room for the anchors, the marker and the newest four messages, not for the get_user step
    budget = count_messages(history[:2] + history[5:]) + marker_tokens("en") + 2
    assert count_messages(history) > budget
    measured = measure_trace(TRACE, budget, KEEP_DIGEST)
    assert measured.points == 1
    kept = measured.sides["turnstream"]
    assert (kept.needed, kept.kept, kept.old, kept.old_kept) == (2, 1, 1, 0)
    assert measured.lost == ["ZR81LM"]
    assert measured.lost_from == {"tool results only": 1, "user or assistant": 0}
    assert measured.clean == 1


def test_a_call_is_tallied_under_the_room_its_anchors_leave() -> None:
    assert [room_label(n) for n in (0, 249, 250, 999, 1000, 40_000)] == [
        "under 250",
        "under 250",
        "250 to 500",
        "500 to 1,000",
        "1,000 and more",
        "1,000 and more",
    ]
    history = TRACE[:CALL]
    budget = count_messages(history[:2] + history[5:]) + marker_tokens("en") + 2
    measured = measure_trace(TRACE, budget, KEEP_DIGEST)
    anchors = sum(map(count_message, history[:2]))  # the system message and the first user message
    (label,) = [label for label, tally in measured.by_room.items() if tally.calls]
    assert label == room_label(budget - anchors - REPLY_PRIMING_TOKENS)
    assert measured.by_room[label].to_dict() == {"calls": 1, **measured.sides["turnstream"].to_dict()}
    doubled = replace(measured)
    doubled.by_room = {k: replace(v) for k, v in measured.by_room.items()}
    doubled.sides = {k: replace(v) for k, v in measured.sides.items()}
    doubled.add(measured)
    assert doubled.by_room[label].calls == 2 and doubled.by_room[label].needed == 2 * measured.by_room[label].needed


def test_no_point_before_the_history_passes_the_budget() -> None:
    assert measure_trace(TRACE, 100_000, KEEP_DIGEST).points == 0


def test_kept_counts_what_any_message_of_the_context_holds_the_block_included() -> None:
    needed = needed_values(TRACE, CALL)
    block = {"role": "system", "content": "Facts: bookings: KX4Q2P, ZR81LM"}
    tally, missing = kept_tally(needed, [TRACE[0], block])
    assert (tally.kept, tally.old_kept, missing) == (1, 1, ["card_9920117"])


def test_the_window_read_at_each_call_is_what_compact_gives_for_the_history_before_it() -> None:
    strategy = offline_strategy(40, 400)
    budget = count_messages(TRACE[:CALL]) // 2
    expected = compact(TRACE[:CALL], budget, strategy=strategy)
    measured = measure_trace(TRACE, budget, strategy)
    assert measured.points == 1
    tally, _ = kept_tally(needed_values(TRACE, CALL), expected.messages)
    assert measured.sides["turnstream"] == tally


def test_anchors_and_tail_keep_the_anchors_the_marker_and_whole_units_within_the_budget() -> None:
    history = TRACE[:CALL]
    budget = count_messages(history) - 50
    kept = anchors_and_tail(history, budget, "en")
    assert kept[:2] == history[:2]
    assert kept[2]["role"] == "system"  # the marker
    assert all(m["role"] != "tool" for m in kept[3:4])  # a unit starts the tail, never a result alone
    assert count_messages(kept) <= budget


def test_trim_messages_keeps_the_system_message_and_starts_on_a_user_message_within_the_budget() -> None:
    budget = count_messages(TRACE[:CALL]) - 50
    kept = LangChainTrim(TRACE).trim(CALL, budget)
    assert kept[0]["role"] == "system"
    assert kept[1]["role"] == "user"
    assert count_messages(kept) <= budget


def test_invariants_catch_a_result_kept_without_its_own_call_even_under_a_reused_id() -> None:
    history = TRACE[: CALL + 2]
    history = [*history, {"role": "user", "content": "thanks"}]
    result_ = compact(history, count_messages(history), strategy=KEEP_DIGEST)  # nothing dropped
    assert invariant_breaks(history, result_, count_messages(history)) == []
    # the first c1 call followed by the second c1 call's result: valid by ids, wrong by position
    swapped = replace(
        result_,
        messages=(*result_.messages[:3], result_.messages[10]),
        positions=(0, 1, 2, 10),
        dropped=0,
    )
    assert "tool pairs" in invariant_breaks(history, swapped, count_messages(history))


def test_invariants_catch_a_lost_anchor_a_missing_marker_and_an_overrun() -> None:
    history = TRACE[:CALL]
    budget = count_messages(history) - 50
    result_ = compact(history, budget, strategy=KEEP_DIGEST)
    assert result_.dropped and invariant_breaks(history, result_, budget) == []
    no_marker = replace(result_, marker_index=None)
    assert invariant_breaks(history, no_marker, budget) == ["marker"]
    no_anchor = replace(result_, messages=result_.messages[1:], positions=result_.positions[1:])
    assert "anchors" in invariant_breaks(history, no_anchor, budget)
    assert invariant_breaks(history, result_, result_.tokens.after - 1) == ["budget"]


def test_a_call_whose_anchors_alone_overrun_the_budget_is_left_out_and_counted_apart() -> None:
    long_policy = {"role": "system", "content": "Rule: always confirm first. " * 200}
    trace = [long_policy, *TRACE[1:]]
    measured = measure_trace(trace, count_messages(trace[:2]), KEEP_DIGEST)
    assert (measured.points, measured.pinned_over) == (0, 1)
    assert measured.sides["turnstream"].needed == 0


def test_the_table_per_domain_shows_each_side_and_a_dash_where_no_call_was_measured() -> None:
    from rich.console import Console

    from turnstream_tools.benchmarks.agent_values import agent_values
    from turnstream_tools.benchmarks.figures import Figure
    from turnstream_tools.benchmarks.report import agent_table

    budget = count_messages(TRACE[:2] + TRACE[5:CALL]) + marker_tokens("en") + 2
    measured = agent_values([("toy", TRACE)], KEEP_DIGEST, budgets=(budget, 50))
    data = {"budgets": {str(b): {d: m.to_dict() for d, m in by.items()} for b, by in measured.items()}}
    console = Console(width=200, record=True)
    console.print(agent_table(Figure("agent_values", "t", "a", "b", [], None, data)))
    text = console.export_text()
    assert "0.0 / 50.0" in text  # turnstream at the first budget: the old value lost, one of two kept
    assert "—" in text and "left out" in text  # at 50 tokens the anchors alone overrun: no call measured


def test_held_out_seeds_are_measured_apart_and_their_rows_come_from_their_own_traces() -> None:
    from turnstream_tools.benchmarks.agent_values import agent_figure

    figure = agent_figure(1, holdout_seeds=(11,))
    held = figure.data["held_out"]["11"]
    for budget in ("2,500", "4,000"):
        old = figure.row(f"old values at {budget}, held-out seeds 11")
        calls = figure.row(f"invariants at {budget}, held-out seeds 11")
        pooled = held[budget.replace(",", "")]["all"]
        assert abs(old.a - pooled["sides"]["turnstream"]["old_kept_pct"]) < 0.1  # the data rounds to one place
        assert calls.b == pooled["points"] and calls.a == pooled["invariants_clean"]
        # the development rows are seed 0's traces, not the held-out ones
        assert (
            figure.row(f"invariants at {budget}").b == figure.data["budgets"][budget.replace(",", "")]["all"]["points"]
        )
    plain = agent_figure(1)
    assert plain.data["held_out"] == {} and not any("held-out" in row.measure for row in plain.rows)


def test_the_compact_llm_figure_pools_the_held_out_seeds_against_figure_13s_and_fails_on_an_invented_reference() -> (
    None
):
    from turnstream_tools.benchmarks.agent_llm import compact_llm_figure
    from turnstream_tools.benchmarks.agent_values import Measure, Tally
    from turnstream_tools.benchmarks.figures import Figure

    def measure(old_kept: int, invented: int = 0) -> Measure:
        each = Measure(points=2, clean=2, invented=invented)
        each.sides["turnstream"] = Tally(needed=10, kept=5 + old_kept, old=5, old_kept=old_kept)
        return each

    def tally(old_kept: int) -> dict[str, dict[str, dict[str, dict[str, int]]]]:
        kept = {"needed": 10, "kept": 5 + old_kept, "old": 5, "old_kept": old_kept}
        return {"2500": {"all": {"sides": {"turnstream": kept}}}}

    offline = Figure(
        "agent_values", "13", "a", "b", [], None, {"budgets": tally(4), "held_out": {"11": tally(2), "23": tally(4)}}
    )
    held = {0: {2500: {"all": measure(4)}}, 11: {2500: {"all": measure(3)}}, 23: {2500: {"all": measure(3)}}}
    figure = compact_llm_figure(held, offline, 5, {"extraction": 5})
    pooled = figure.row("old values at 2,500, held-out seeds, with the model vs offline")
    assert (pooled.a, pooled.b) == (60.0, 60.0)  # 6 of 10 old values either way
    assert figure.row("invariants at 2,500, held-out seeds, with the model").b == 4
    assert figure.target is not None and figure.target.met
    leaked = {**held, 23: {2500: {"all": measure(3, invented=1)}}}
    lower = {**held, 0: {2500: {"all": measure(3)}}}
    for worse in (leaked, lower):
        target = compact_llm_figure(worse, offline, 5, {"extraction": 5}).target
        assert target is not None and not target.met
