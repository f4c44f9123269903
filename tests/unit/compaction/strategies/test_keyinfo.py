import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from turnstream.compaction.strategies import Digest, Fact
from turnstream.compaction.strategies.keyinfo import KeyInfoExtractor, merge_facts


def user(text: str) -> dict:
    return {"role": "user", "content": text}


def extract(*texts: str, max_facts: int = 40) -> tuple[Fact, ...]:
    return KeyInfoExtractor(max_facts).apply(Digest(), [user(t) for t in texts], 0).facts


# Phrasings that are not in turnstream_tools.samples: extraction works from cues, not from the generator's templates.
@pytest.mark.parametrize(
    ("text", "kind", "key", "value"),
    [
        ("Hey, name's Oluwaseun, nice to meet you", "fact", "name", "Oluwaseun"),
        ("I've been living in Montevideo since 2019", "fact", "home city", "Montevideo"),
        ("Just so you know I'm allergic to latex", "constraint", "allergy", "latex"),
        ("We can't afford more than $1,200 for flights", "constraint", "budget", "1,200"),
        ("My wife's birthday is on July 8", "fact", "wife birthday", "July 8"),
        ("Honestly I adore rooftop bars", "preference", "pref:", "rooftop bars"),
        ("I'd rather avoid connecting flights through Frankfurt", "preference", "pref:", "Frankfurt"),
        ("The meeting room must seat at least 12", "constraint", "constraint:", "12"),
        ("Let's go with the Hotel Astoria then", "event", "decision:", "Astoria"),
        ("We will take the 7:15 train", "event", "decision:", "7:15"),
        ("Let us book the Lisbon flat", "event", "decision:", "Lisbon"),
        ("The promo code you gave me didn't work", "failure", "failure:", "promo code"),
        ("I'm flying out on Friday morning", "event", "event:", "Friday"),
        ("我叫林晓峰，很高兴认识你", "fact", "name", "林晓峰"),
        ("我现在住在苏州工业园区", "fact", "home city", "苏州"),
        ("我对青霉素过敏", "constraint", "allergy", "青霉素"),
        ("这次预算不超过两万元", "constraint", "budget", "两万元"),
        ("我比较偏好安静的民宿", "preference", "pref:", "民宿"),
        ("酒店必须有停车场", "constraint", "constraint:", "停车场"),
        ("上次那个接口调用失败了", "failure", "failure:", "失败"),
        ("我们决定坐高铁去", "event", "decision:", "高铁"),
        ("我的孩子是8岁", "fact", "孩子", "8岁"),
    ],
)
def test_extracts_typed_keyed_fact(text: str, kind: str, key: str, value: str) -> None:
    """`key` is the slot, or the namespace ("pref:") of a key derived from the words."""
    facts = extract(text)
    assert [f.type for f in facts] == [kind]
    assert (
        facts[0].key == key if not key.endswith(":") else facts[0].key.startswith(key) and len(facts[0].key) > len(key)
    )
    assert value in facts[0].text


@pytest.mark.parametrize(
    "text", ["ok thanks", "Can you check the weather?", "Sounds good.", "好的，谢谢", "那边天气怎么样？", "hmm"]
)
def test_small_talk_and_plain_questions_give_nothing(text: str) -> None:
    assert extract(text) == ()


@pytest.mark.parametrize(
    "texts",
    [
        ("I hate layovers.", "As I said, I hate layovers!"),
        ("My budget is 2000 euros.", "Again: my budget is 2000 euros."),
        ("I love hiking in the mountains.", "I really love hiking in the mountains."),
        ("我不喜欢转机。", "我不喜欢转机！"),
    ],
)
def test_restated_fact_is_one_entry(texts: tuple[str, ...]) -> None:
    assert len(extract(*texts)) == 1


@pytest.mark.parametrize(
    ("old", "new", "new_value", "old_value"),
    [
        ("My budget is 2000 euros.", "Actually my budget is 3000 not 2000.", "3000", "2000"),
        ("My budget is 2000 euros.", "Actually, make that 3500 euros, not 2000.", "3500", "2000"),
        ("I live in Lyon.", "Correction: I live in Nantes now.", "Nantes", "Lyon"),
        ("I prefer aisle seats.", "Actually I prefer window seats instead of aisle seats.", "window", "aisle seats"),
        ("The hotel must be near the beach.", "Scratch that, the hotel must be near the station.", "station", "beach"),
        ("我的预算是5000元。", "我改主意了，预算改成8000元。", "8000", "5000"),
        ("我住在成都。", "更正一下：我住在重庆，不是成都。", "重庆", "成都"),
    ],
)
def test_corrected_fact_replaces_the_old_one(old: str, new: str, new_value: str, old_value: str) -> None:
    facts = extract(old, "Something unrelated about trains.", new)
    texts = " | ".join(f.text for f in facts)
    assert new_value in texts
    assert not any(old_value in f.text and new_value not in f.text for f in facts), texts


def test_tool_results_give_data_and_failures_named_after_their_call() -> None:
    call = {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": "a", "type": "function", "function": {"name": "search_flights", "arguments": '{"to": "LIS"}'}},
            {"id": "b", "type": "function", "function": {"name": "book_hotel", "arguments": '{"id": 7}'}},
        ],
    }
    results = [
        {"role": "tool", "tool_call_id": "a", "content": '{"cheapest": 420, "airline": "TAP", "results": [1, 2, 3]}'},
        {"role": "tool", "tool_call_id": "b", "content": "Error: payment gateway timeout"},
    ]
    facts = KeyInfoExtractor().apply(Digest(), [call, *results], 5).facts
    data, failure = facts
    assert (
        (data.type, data.source_seq) == ("fact", 6)
        and "search_flights" in data.text
        and "420" in data.text
        and "TAP" in data.text
    )
    assert (
        (failure.type, failure.source_seq) == ("failure", 7)
        and "book_hotel" in failure.text
        and "timeout" in failure.text
    )


def test_assistant_confirmations_and_failures_are_kept_but_its_prose_is_not() -> None:
    messages = [
        {"role": "assistant", "content": "I've booked the 9:40 train to Split."},
        {"role": "assistant", "content": "The museums there are lovely."},
        {"role": "assistant", "content": "The card payment failed twice."},
    ]
    facts = KeyInfoExtractor().apply(Digest(), messages, 0).facts
    assert [f.type for f in facts] == ["event", "failure"]


def test_cap_evicts_tool_data_before_user_facts_and_oldest_first() -> None:
    user_facts = [Fact("constraint", f"must have {i}", f"constraint:{i}", i) for i in range(3)]
    data = [Fact("fact", f"tool {i}", f"data:tool:{i}", 10 + i) for i in range(3)]
    kept = merge_facts(user_facts[:2], [*data, user_facts[2]], max_facts=4)
    assert {f.key for f in kept} == {"constraint:0", "constraint:1", "constraint:2", "data:tool:2"}


def test_extraction_accumulates_across_applications() -> None:
    extractor = KeyInfoExtractor()
    digest = extractor.apply(Digest(), [user("I'm allergic to peanuts.")], 0)
    digest = extractor.apply(digest, [user("My budget is 900 dollars.")], 1)
    assert [f.key for f in digest.facts] == ["allergy", "budget"]


message_values = st.recursive(
    st.none() | st.text() | st.integers() | st.booleans(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=8,
)
messages = st.one_of(
    st.dictionaries(
        st.sampled_from(["role", "content", "tool_calls", "tool_call_id", "name"]), message_values, max_size=5
    ),
    st.fixed_dictionaries(
        {"role": st.sampled_from(["user", "assistant", "tool", "system"]), "content": st.text(max_size=200)}
    ),
    message_values,
)


@settings(max_examples=150, deadline=None)
@given(st.lists(messages, max_size=6), st.integers(-5, 10_000))
def test_never_raises_and_respects_cap(dropped: list, first_seq: int) -> None:
    digest = KeyInfoExtractor(max_facts=3).apply(Digest(), dropped, first_seq)
    assert len(digest.facts) <= 3
