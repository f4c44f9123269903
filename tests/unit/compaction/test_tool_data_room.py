"""An agent's tool data keeps its room in the block: what goes first, and how an oversized result is condensed."""

from __future__ import annotations

import orjson
from hypothesis import given
from hypothesis import strategies as st

from tests.unit.compaction.helpers import call, result, sys_, thought, user
from turnstream.compaction.compactor import CompactionResult, compact
from turnstream.compaction.fitting import cut_block, eviction_order, focus_of, focus_terms, trim_message
from turnstream.compaction.strategies.base import Digest, Fact
from turnstream.compaction.strategies.offline import build_strategy
from turnstream.settings import Settings
from turnstream.text.tokens import count_message, count_text


def _facts() -> tuple[Fact, ...]:
    return (
        Fact("fact", "search_flights(date=2026-05-01) -> CA929 (price=1773)", "data:search_flights:date=2026-05-01", 5),
        Fact("fact", "search_hotels(city=Tokyo) -> TYO-10477 (name=Asakusa)", "data:search_hotels:city=Tokyo", 9),
        Fact("fact", "search_restaurants(q=ramen) -> R-1 (name=Ichi)", "data:search_restaurants:q=ramen", 12),
        Fact("fact", "search_restaurants(q=sushi) -> R-2 (name=Ni)", "data:search_restaurants:q=sushi", 15),
        Fact("fact", "get_booking(id=KX4Q2P) -> status=confirmed", "data:#KX4Q2P", 16),
        Fact("event", "We met at the lounge at 6.", "event:lounge", 17),
        Fact("constraint", "I'm allergic to seafood.", "allergy", 3),
    )


def test_a_repeated_search_gives_up_its_older_results_first_then_events_then_the_oldest_data() -> None:
    facts = _facts()
    order = [facts[i].key for i in eviction_order(facts)]
    assert order[0] == "data:search_restaurants:q=ramen"  # a newer result of the same tool follows it
    assert order[1] == "event:lounge"  # an event ranks below the data an agent passes on
    # then tool data by age; the user's constraint last
    assert order[2:5] == [
        "data:search_flights:date=2026-05-01",
        "data:search_hotels:city=Tokyo",
        "data:search_restaurants:q=sushi",
    ]
    assert order[-1] == "allergy"


def test_a_block_with_tool_data_cuts_its_summary_to_the_floor_before_any_fact_goes() -> None:
    summary = "\n".join(f"user: line {n} about the ramen places near the hotel in Asakusa" for n in range(60))
    digest = Digest(summary=summary, facts=_facts())
    block = cut_block(digest, "en", 400)
    assert block is not None and block[1] <= 400
    text = block[0]["content"]
    assert all(fact.text in text for fact in digest.facts)
    chat = Digest(summary=summary, facts=tuple(f for f in digest.facts if not f.key.startswith("data:")))
    chat_block = cut_block(chat, "en", 120)
    assert chat_block is not None
    # without tool data, the summary keeps half of a cut block, as the story of a chat needs
    assert count_text(chat_block[0]["content"].split("\n\n")[0]) >= 55


def test_a_cut_block_gives_its_spare_room_back_to_the_summary() -> None:
    summary = "\n".join(f"user: line {n} of the plan" for n in range(80))
    big = Fact("fact", "search(q=all) -> " + ", ".join(f"ID-{n:04d}" for n in range(60)), "data:search:q=all", 4)
    block = cut_block(Digest(summary=summary, facts=(big,)), "en", 300)
    assert block is not None
    assert 290 <= block[1] <= 300  # the fact that went freed far more than the excess


def test_an_oversized_json_result_is_condensed_to_its_ids_not_cut_through() -> None:
    flights = [{"flight_number": f"CA9{n:02d}", "depart": f"2026-05-{n + 1:02d}", "price": 1700 + n} for n in range(30)]
    message = {"role": "tool", "tool_call_id": "c1", "content": orjson.dumps({"flights": flights}).decode()}
    trimmed = trim_message(message, 220, "en")
    assert trimmed is not None
    condensed, cost = trimmed
    assert cost <= 220 and count_message(condensed) == cost
    shown = condensed["content"].count("CA9")
    assert "CA900" in condensed["content"] and f"+{30 - shown} more flights" in condensed["content"]
    assert "trimmed" in condensed["content"]
    prose = {"role": "tool", "tool_call_id": "c1", "content": "word " * 400}
    cut = trim_message(prose, 50, "en")
    assert cut is not None and cut[0]["content"].startswith("word word")


def test_a_tight_block_shrinks_tool_results_to_their_values_before_any_fact_goes() -> None:
    alerts = ", ".join(f"ALR-{n:06d} (severity=warning; region=ap-southeast-2; code=CONN_RESET)" for n in range(8))
    facts = (
        Fact("fact", f"list_alerts(service=auth) -> alerts: {alerts}", "data:list_alerts:service=auth", 3),
        Fact(
            "fact",
            "create_incident(title=auth 5xx) -> incident_id=INC-72652; status=investigating",
            "data:#INC-72652",
            6,
        ),
        Fact("constraint", "Never page the payments team at night.", "constraint:page-payments-night", 2),
    )
    whole = cut_block(Digest(facts=facts), "en", 10_000)
    assert whole is not None
    block = cut_block(Digest(facts=facts), "en", whole[1] - 60)
    assert block is not None
    text = block[0]["content"]
    assert all(f"ALR-{n:06d}" in text for n in range(8))  # every id stays, its path and words go
    assert "severity=warning" not in text
    assert "INC-72652" in text and "Never page the payments team" in text


def test_an_entity_outlasts_a_search_of_the_same_age() -> None:
    search = Fact("fact", "search(q=x) -> A1, B2", "data:search:q=x", 5)
    entity = Fact("fact", "get_order(id=#W1) -> status=shipped", "data:##W1", 5)
    assert eviction_order([entity, search]) == [1, 0]


def test_a_tighter_block_keeps_each_results_ids_and_lets_its_measures_go_before_any_fact_goes() -> None:
    series = ", ".join(f"2024-07-11T11:{n:02d}:00Z, 0.{n + 10}" for n in range(20))
    facts = (
        Fact("fact", f"query_metrics(service=auth) -> series: {series}", "data:query_metrics:service=auth", 3),
        Fact(
            "fact", "list_alerts(service=auth) -> ALR-303881, ALR-192763, zip=02108, 2024-07-11", "data:list_alerts", 4
        ),
    )
    values = cut_block(Digest(facts=facts), "en", 10_000)
    assert values is not None
    block = cut_block(Digest(facts=facts), "en", values[1] // 3)
    assert block is not None
    text = block[0]["content"]
    assert "query_metrics(service=auth)" in text and "0.12" not in text and "T11:05" not in text
    assert all(value in text for value in ("ALR-303881", "ALR-192763", "02108", "2024-07-11"))


def test_a_result_answers_the_latest_call_of_its_id_before_it() -> None:
    from turnstream.compaction.strategies.keyinfo import KeyInfoExtractor

    def call(name: str, args: str) -> dict[str, object]:
        return {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": "call_0", "type": "function", "function": {"name": name, "arguments": args}}],
        }

    span = [
        call("list_alerts", '{"service": "auth"}'),
        {
            "role": "tool",
            "tool_call_id": "call_0",
            "content": '{"alerts": [{"alert_id": "ALR-1"}, {"alert_id": "ALR-2"}]}',
        },
        call("get_logs", '{"service": "auth"}'),
        {
            "role": "tool",
            "tool_call_id": "call_0",
            "content": '{"lines": [{"request_id": "req-1"}, {"request_id": "req-2"}]}',
        },
    ]
    facts = KeyInfoExtractor().extract((), span, 2)
    assert [fact.text.split("(")[0] for fact in facts] == ["list_alerts", "get_logs"]
    assert "ALR-1" in facts[0].text and "req-1" in facts[1].text


def test_a_tool_result_no_room_can_hold_falls_to_its_digest() -> None:
    from turnstream.compaction.compactor import compact

    policy = {"role": "system", "content": "Rule. " * 900}
    rows = [{"alert_id": f"ALR-{n:06d}", "note": "connection reset by peer " * 6} for n in range(60)]
    messages = [
        policy,
        {"role": "user", "content": "Help."},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "list_alerts", "arguments": "{}"}}],
        },
        {"role": "tool", "tool_call_id": "c1", "content": orjson.dumps({"alerts": rows}).decode()},
    ]
    result = compact(messages, 1000, strategy=None)  # the anchors alone are over the budget
    kept = result.messages[-1]
    assert kept["role"] == "tool" and "ALR-000000" in kept["content"] and "trimmed" in kept["content"]
    assert result.message_tokens[-1] < count_message(messages[-1]) // 4


def test_at_its_ids_a_result_leaves_out_the_ids_a_fact_that_outlasts_it_holds() -> None:
    lines = "; ".join(f"LN-{n:05d} (plan=plan_{n}; status=active; note=roaming on)" for n in range(6))
    facts = (
        Fact("fact", f"get_bill(account_id=BA-1) -> BILL-7 charges: {lines}", "data:get_bill:account_id=BA-1", 3),
        Fact("fact", f"get_customer(id=CUS-1) -> customer_id=CUS-1; lines: {lines}", "data:#CUS-1", 5),
    )
    values = cut_block(Digest(facts=facts), "en", 10_000)
    assert values is not None
    block = cut_block(Digest(facts=facts), "en", values[1] // 3)  # below both results at their values
    assert block is not None
    text = block[0]["content"]
    assert "BILL-7" in text and all(text.count(f"LN-{n:05d}") == 1 for n in range(6))


def test_what_the_assistant_recommended_gives_up_before_tool_data() -> None:
    said = Fact("constraint", "推荐浅草松屋素食屋，人均约3500日元。", "constraint:assistant-diet", 22)
    hotels = Fact("fact", "search_hotels(city=东京) -> TYO-10477, KNG-176", "data:search_hotels:city=东京", 13)
    allergy = Fact("constraint", "另外我对海鲜过敏。", "allergy", 7)
    order = eviction_order([said, hotels, allergy])
    assert order == [0, 1, 2]  # the user set no constraint by it: the hotel's ids outrank it, the allergy outlasts both


def test_the_users_decision_outlasts_the_data_it_chose_among_and_the_assistants_account_gives_up_first() -> None:
    from turnstream.compaction.strategies.keyinfo import KeyInfoExtractor

    span = [
        {"role": "user", "content": "I'll go with 5 gigs at $25 a month."},
        {"role": "assistant", "content": "Your plan change is scheduled."},
    ]
    chosen, scheduled = KeyInfoExtractor().extract((), span, 30)
    assert chosen.key.startswith("decision:") and scheduled.key.startswith("decision:assistant-")
    plans = Fact(
        "fact", "get_plan_options(line_id=LN-1) -> plan_basic_5, plan_smart_15", "data:get_plan_options:LN-1", 31
    )
    order = eviction_order([scheduled, plans, chosen])
    assert order == [0, 1, 2]  # the assistant's account of it first, the user's choice last


def test_a_result_whose_ids_later_calls_keep_passing_outlasts_a_lookup_of_the_same_age() -> None:
    customer = Fact("fact", "get_customer(phone=206-555-5896) -> CUS-13187, LN-26625", "data:get_customer:phone", 5)
    outages = Fact("fact", "get_outage_map(zip=73301) -> OUT-88, OUT-91", "data:get_outage_map:zip", 5)
    details = Fact("fact", "get_line(line_id=LN-26625) -> DEV-9", "data:get_line:line_id=LN-26625", 7)
    change = Fact("fact", "change_plan(line_id=LN-26625) -> PLN-7", "data:#PLN-7", 9)
    # two later calls passed the customer's line on; the outage map was not passed on at all
    assert eviction_order([customer, outages, details, change])[0] == 1
    # one later call is a lookup followed through once: no bonus, the older fact (lower index) goes first
    assert eviction_order([customer, outages, change])[0] == 0


def _tool_step(call_id: str, tool: str, arguments: str, reply: str) -> list[dict[str, object]]:
    return [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": call_id, "type": "function", "function": {"name": tool, "arguments": arguments}}],
        },
        result(call_id, reply),
    ]


def test_a_failed_call_no_result_has_followed_outlasts_the_records_and_gives_up_first_once_the_agent_moved_on() -> None:
    from turnstream.compaction.strategies.keyinfo import KeyInfoExtractor

    account = _tool_step(
        "c1", "get_account", '{"account_id": "ACC-57275950"}', '{"account_id": "ACC-57275950", "available": 502.01}'
    )
    failed = _tool_step(
        "c2",
        "transfer_funds",
        '{"from_account_id": "ACC-57275950", "payee_id": "PY-736975", "amount": 1376.21, "memo": "Rent"}',
        "Error: insufficient available balance on ACC-57275950 (502.01 USD)",
    )
    facts = KeyInfoExtractor().extract((), [*account, *failed], 10)
    record, attempt = facts
    assert record.key.startswith("data:#") and attempt.key.startswith("failure:transfer_funds:")
    # the pending step retries the transfer with what it failed with: the record of the same worth goes first
    assert eviction_order(facts) == [0, 1]
    payee = _tool_step("c3", "get_payee", '{"payee_id": "PY-736975"}', '{"payee_id": "PY-736975", "name": "Oakwood"}')
    moved_on = KeyInfoExtractor().extract(facts, payee, 14)
    assert [moved_on[i].key for i in eviction_order(moved_on)][0] == attempt.key  # a failure's worth again
    said = Fact("failure", "error: the card was declined twice", "failure:error: the card was declined", 20)
    assert eviction_order([*moved_on, said])[:2] == [1, 3]  # a failure told of, however new, is no call to retry


def test_a_models_facts_quoting_a_results_ids_are_no_calls_passing_them_on() -> None:
    customer = Fact("fact", "get_customer(phone=206-555-5896) -> CUS-13187, LN-26625", "data:get_customer:phone", 5)
    outages = Fact("fact", "get_outage_map(zip=73301) -> OUT-88, OUT-91", "data:get_outage_map:zip", 5)
    quoted = [
        Fact("fact", f'{{"customer_id": "CUS-13187", "n": {n}}}', f"model:tool result {n}", 8 + n) for n in (1, 2)
    ]
    assert eviction_order([customer, outages, *quoted])[:3] == [2, 3, 0]  # the older of two equals goes first
    calls = [
        Fact("fact", f"{tool}(line_id=LN-26625) -> DEV-{n}", f"data:{tool}:LN-26625", 8 + n)
        for n, tool in ((1, "get_line"), (2, "get_bill"))
    ]
    assert eviction_order([customer, outages, *calls])[0] == 1  # two calls passed the line on: the customer outlasts


def test_the_record_of_whom_the_agent_serves_outlasts_later_records_of_the_same_worth() -> None:
    lookup = Fact("fact", "find_user_id_by_email(email=mia@example.com) -> mia_li_3818", "data:find_user_id:mia", 5)
    user = Fact(
        "fact",
        "get_user_details(user_id=mia_li_3818) -> payment_methods: gift_card_7, credit_card_9; orders: #W118",
        "data:#mia_li_3818",
        7,
    )
    order = Fact("fact", "get_order_details(order_id=#W118) -> #W118, item 6057096397", "data:##W118", 9)
    # a one-value lookup before it does not count: the user's record is the first, and the order goes first
    assert eviction_order([lookup, user, order])[1:] == [2, 1]
    flights = Fact("fact", "search_flights(origin=PEK) -> CA929, MU515", "data:search_flights:origin=PEK", 3)
    # a search first makes no record the served one: among equals the older goes first
    assert eviction_order([flights, user, order])[1:] == [1, 2]


def _at_its_values(fact: Fact) -> str:
    """The block of `fact` alone, cut 60 tokens below its whole: room for its values, not for its prose."""
    whole = cut_block(Digest(facts=(fact,)), "en", 10_000)
    assert whole is not None
    block = cut_block(Digest(facts=(fact,)), "en", whole[1] - 60)
    assert block is not None
    return block[0]["content"]


def test_a_results_ids_leave_out_what_its_call_already_shows() -> None:
    refund = Fact(
        "fact",
        "refund_charge(account_id=BA-3787040; charge_id=chg_7185712) -> refund_id=RF-28221293; "
        "account_id=BA-3787040; charge_id=chg_7185712; note=" + "goodwill credit " * 30,
        "data:refund_charge:account_id=BA-3787040",
        4,
    )
    text = _at_its_values(refund)
    assert "RF-28221293" in text
    assert text.count("chg_7185712") == 1 and text.count("BA-3787040") == 1


def test_a_fact_that_went_comes_back_when_the_one_that_went_after_it_freed_enough() -> None:
    small = Fact("event", "Checked in at the Asakusa hotel.", "decision:checkin", 1)
    large = Fact("constraint", "Never book " + ", ".join(f"hotel {n}" for n in range(60)), "constraint:hotels", 2)
    kept = Fact("constraint", "I'm allergic to seafood.", "allergy", 3)
    both = cut_block(Digest(facts=(kept, small)), "en", 10_000)
    assert both is not None
    # room for the allergy and the check-in, not for the long constraint: the check-in goes first (least valuable),
    # then the constraint, and the room that frees takes the check-in back
    block = cut_block(Digest(facts=(small, large, kept)), "en", both[1] + 2)
    assert block is not None
    assert "Checked in" in block[0]["content"] and "allergic" in block[0]["content"]
    assert "Never book" not in block[0]["content"]


def test_the_result_the_users_request_names_outlasts_one_of_the_same_worth() -> None:
    transactions = Fact(
        "fact",
        "list_transactions(account_id=ACC-1) -> TX-TAVY (merchant=Blue Bottle Coffee; amount=374.21)",
        "data:list_transactions:account_id=ACC-1",
        5,
    )
    card = Fact("fact", "get_card(card_id=card_3463043) -> 9308, active", "data:get_card:card_id=card_3463043", 5)
    assert eviction_order([transactions, card])[0] == 0  # the older index goes first among equals
    focus = focus_terms("That Blue Bottle Coffee one for $374.21 isn't mine.")
    assert eviction_order([transactions, card], focus)[0] == 1


def test_a_tool_results_keys_are_no_part_of_what_a_request_names() -> None:
    search = Fact("fact", "search_flights(origin=SEA) -> flights: HAT781, HAT329", "data:search_flights:origin=SEA", 5)
    reservation = Fact("fact", "get_reservation(id=WAZX32) -> flights: SKW673", "data:get_reservation:id=WAZX32", 6)
    focus = focus_terms("Any flights that day?")  # every digest reads `flights:`, and none is the one asked for
    assert eviction_order([search, reservation], focus) == eviction_order([search, reservation])
    assert eviction_order([search, reservation], focus_terms("Is SKW673 still on time?"))[0] == 0


def test_a_chats_block_has_no_focus_so_it_stays_the_same_for_any_question() -> None:
    chat = Digest(summary="user: we talked about Lisbon", facts=(Fact("fact", "I live in Lisbon.", "fact:lisbon", 1),))
    assert focus_of(chat, "Where do I live?") == frozenset()
    agent = Digest(facts=_facts())
    assert "tyo-10477" in focus_of(agent, "Book TYO-10477 please")


def _search(arguments: str, seq: int) -> Fact:
    return Fact("fact", f"search_flights({arguments}) -> CA929, JL725", f"data:search_flights:{arguments}", seq)


def test_a_search_redone_with_one_argument_changed_gives_up_first() -> None:
    earlier = _search("origin=TYO; destination=SEL; date=2024-06-12; passengers=2", 5)
    redone = _search("origin=TYO; destination=SEL; date=2024-06-13; passengers=2", 9)
    narrowed = _search("origin=TYO; destination=SEL; date=2024-06-13; passengers=2; cabin=business", 9)
    user = Fact("fact", "We fly out on the 12th.", "fact:fly-12th", 3)
    assert eviction_order([user, earlier, redone])[0] == 1  # another date for the same route: the agent moved on
    assert eviction_order([user, earlier, narrowed])[0] == 1  # a filter added to the same search


def test_a_search_for_the_next_leg_keeps_its_worth() -> None:
    """A later call of the same tool that changes more than one argument asks for something else: the first leg's
    flights are still the ones the agent books, so among equals the oldest goes first, not the first leg."""
    first_leg = _search("origin=PEK; destination=TYO; date=2024-06-09; passengers=2", 5)
    user = Fact("fact", "We fly out on the 9th.", "fact:fly-9th", 3)
    next_leg = _search("origin=TYO; destination=SEL; date=2024-06-12; passengers=2", 9)
    assert eviction_order([first_leg, user, next_leg]) == [1, 0, 2]


@given(st.lists(st.sampled_from(["a=1", "a=2", "b=1", "b=2", "c=1", "c=2"]), min_size=1, max_size=4, unique=True))
def test_a_search_is_redone_by_one_that_keeps_all_but_one_of_its_arguments(arguments: list[str]) -> None:
    earlier = Fact("fact", "search(...) -> X1", "data:search:" + "; ".join(arguments), 1)
    for changed in range(len(arguments) + 1):
        later_arguments = [f"{item}0" for item in arguments[:changed]] + arguments[changed:]
        later = Fact("fact", "search(...) -> X2", "data:search:" + "; ".join(later_arguments), 2)
        other = Fact("fact", "lookup(...) -> X3", "data:lookup:z=1", 1)
        # `other` is as old and worth as much: the earlier search goes first only when the later one redid it
        first = eviction_order([other, earlier, later])[0]
        assert first == (1 if changed <= 1 else 0)


def _agent_with_bookings_then(newest: str) -> CompactionResult:
    """A 1,500-token budget under a 500-token policy: six bookings read and talked over, then one more call whose
    result is `newest`."""
    policy = sys_("You are a travel agent. " + "Follow the booking policy to the letter. " * 60)
    messages = [policy, user("Check my six bookings, then the logs.")]
    for n in range(6):
        booking = orjson.dumps({"booking_id": f"KX4Q2{n}", "status": "confirmed", "flight": f"CA92{n}"}).decode()
        messages += [
            call(f"b{n}", args=f'{{"booking": {n}}}'),
            result(f"b{n}", booking),
            thought(f"Booking {n}: " + "on time, seat kept. " * 30),
        ]
    messages += [user("Now the logs."), call("logs", args='{"service": "checkout"}'), result("logs", newest)]
    return compact(messages, 1500, strategy=build_strategy(Settings()))


def test_a_large_newest_result_is_condensed_to_leave_the_block_its_floor() -> None:
    lines = [{"request_id": f"req-{n:05d}", "trace": f"tr-{n * 7919:08x}", "ms": 300 + n} for n in range(45)]
    compacted = _agent_with_bookings_then(orjson.dumps({"lines": lines}).decode())
    assert compacted.tokens.after <= 1500
    block = compacted.messages[compacted.marker_index + 1]  # type: ignore[operator]  # compacted: a marker
    assert block["role"] == "system" and sum(f"KX4Q2{n}" in block["content"] for n in range(6)) >= 3
    newest = compacted.messages[-1]
    assert "trimmed" in newest["content"]  # condensed, not cut: every id it holds is still there
    assert all(f"req-{n:05d}" in newest["content"] and f"tr-{n * 7919:08x}" in newest["content"] for n in range(45))


def test_a_prose_result_is_never_cut_for_the_block() -> None:
    prose = "The logs show upstream timeouts from the payment gateway since 14:02. " * 50
    compacted = _agent_with_bookings_then(prose)
    assert compacted.messages[-1]["content"] == prose


def test_ids_a_result_left_to_a_fact_that_then_had_to_go_come_back_with_the_result() -> None:
    accounts = ("ACC-57275950", "ACC-18747611", "ACC-48206883")
    customer = Fact(
        "fact",
        f"get_customer(customer_id=CU-1995109) -> customer_id=CU-1995109; accounts: {', '.join(accounts)}; "
        "cards: card_3463043, card_6577692",
        "data:get_customer:customer_id=CU-1995109",  # a lookup, not an entity: the statements outlast it
        5,
    )
    statements = tuple(
        Fact(
            "fact",
            f"get_account(account_id={account}) -> account_id={account}; transactions: "
            + "; ".join(f"TX-{n:04d}{index}ABCDE, 2024-10-{n + 1:02d}" for n in range(20)),
            f"data:#{account}",
            6 + index,
        )
        for index, account in enumerate(accounts)
    )
    digest = Digest(facts=(customer, *statements))
    alone = cut_block(Digest(facts=(customer,)), "en", 10_000)
    assert alone is not None
    # room for the customer's record, none for a statement: at its ids the record left the accounts to the statements'
    # calls, which outlast it, and the statements go after all
    block = cut_block(digest, "en", alone[1] + 20)
    assert block is not None
    text = block[0]["content"]
    assert not any(f"TX-0019{index}ABCDE" in text for index in range(3))  # no statement came back whole
    assert all(account in text for account in accounts) and "card_3463043" in text


def test_at_its_values_a_record_keeps_an_id_in_the_phrase_it_was_written_in_and_a_house_number_stays_a_number() -> None:
    incident = Fact(
        "fact",
        "get_incident(incident_id=INC-54873) -> incident_id=INC-54873; status=monitoring; severity=SEV1; "
        "timeline: (at, event): 2024-06-14T14:31:00Z, alerts fired; -, rollback to dep-n3lf3v; "
        "address: (address1=857 Cedar Lane; address2=Suite 978); note=" + "paged the growth team " * 12,
        "data:#INC-54873",
        5,
    )
    text = _at_its_values(incident)
    assert "paged the growth team" not in text
    assert "rollback to dep-n3lf3v" in text  # what `update_incident(mitigation=…)` passes on, verbatim
    assert "Cedar Lane" not in text and "Suite" not in text and "857" in text and "978" in text


def test_at_its_values_a_result_keeps_a_persons_name_and_leaves_other_words() -> None:
    reservation = Fact(
        "fact",
        "get_reservation_details(reservation_id=XS8X9W) -> reservation_id=XS8X9W; hotel: (name=Harbor Inn The Loop); "
        "passengers: (first_name=Raj; last_name=Moreau; dob=1981-06-07); cabin=economy; note="
        + "window seat requested "
        * 12,
        "data:#XS8X9W",
        5,
    )
    text = _at_its_values(reservation)
    assert "window seat" not in text and "economy" not in text and "Harbor Inn" not in text
    assert "Raj" in text and "Moreau" in text and "1981-06-07" in text  # what a booking for this passenger passes
    deploys = Fact(
        "fact",
        "get_deploys(service=search; limit=2) -> deploys: dep-ymru28 (commit=e435323f6f2a; author=marcus; "
        "status=succeeded; notes=" + "retry budget raised for the pricing client " * 8 + "); "
        "dep-7dxe00 (commit=7508a437ff76; author=priya; status=succeeded)",
        "data:get_deploys:service=search; limit=2",
        5,
    )
    text = _at_its_values(deploys)
    assert "marcus" in text and "priya" in text and "succeeded" not in text  # a postmortem names who shipped it


def test_a_result_too_big_for_the_room_even_at_its_ids_keeps_its_first_ids_and_counts_the_rest() -> None:
    accounts = ("ACC-51970518", "ACC-86290278", "ACC-15936512")
    payees = tuple(f"PY-{n}83013" for n in range(12))
    customer = Fact(
        "fact",
        f"get_customer(customer_id=CU-7378371) -> customer_id=CU-7378371; accounts: {', '.join(accounts)}; "
        f"payees: {', '.join(payees)}",
        "data:#CU-7378371",
        5,
    )
    digest = Digest(summary="user: Can you raise my daily limit? " * 20, facts=(customer,))
    whole = cut_block(Digest(facts=(customer,)), "en", 10_000)
    assert whole is not None
    block = cut_block(digest, "en", whole[1] // 2)
    assert block is not None and block[1] <= whole[1] // 2
    text = block[0]["content"]
    # the accounts come first in the result, so they are what fits; the block says how many ids it left out
    assert all(account in text for account in accounts)
    assert payees[-1] not in text
    left = sum(payee not in text for payee in payees)
    assert f"+{left} more" in text


def test_where_a_model_wrote_the_digest_its_summary_keeps_the_room_no_whole_fact_fits_in() -> None:
    customer = Fact(
        "fact",
        "get_customer(customer_id=CU-7378371) -> accounts: ACC-51970518, ACC-86290278, ACC-15936512; "
        f"payees: {', '.join(f'PY-{n}83013' for n in range(12))}",
        "data:#CU-7378371",
        5,
    )
    said = Fact("fact", "The customer wants the rent settled this week.", "model:rent", 6)
    summary = "step: booked F2449566952 for the rent. " * 20
    alone = cut_block(Digest(facts=(customer,)), "en", 10_000)
    assert alone is not None
    offline = cut_block(Digest(summary=summary, facts=(customer,)), "en", alone[1] // 2)
    modelled = cut_block(Digest(summary=summary, facts=(customer, said)), "en", alone[1] // 2)
    assert offline is not None and modelled is not None
    assert "ACC-51970518" in offline[0]["content"] and " more" in offline[0]["content"]
    assert "ACC-51970518" not in modelled[0]["content"] and "F2449566952" in modelled[0]["content"]
