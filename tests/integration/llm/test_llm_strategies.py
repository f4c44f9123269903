"""LLM strategies against a real local OpenAI-compatible HTTP server."""

import openai
import orjson
import pytest

from turnstream.compaction.strategies import Digest, Fact
from turnstream.compaction.strategies.keyinfo import KeyInfoExtractor
from turnstream.compaction.strategies.summary import RollingSummarizer
from turnstream.llm.calls import client_options, extract_facts, merge_summary
from turnstream.llm.strategies import LLMKeyInfoExtractor, LLMSummarizer
from turnstream.text.tokens import count_text

OLD = Digest(
    summary="user: We are planning a trip to Japan.",
    facts=(Fact("constraint", "My budget is 2000 euros.", "budget", 1),),
)
DROPPED = [
    {"role": "user", "content": "Actually my budget is 3000 euros, not 2000."},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "search_hotels", "arguments": '{"city": "Kyoto"}'}}
        ],
    },
    {"role": "tool", "tool_call_id": "c1", "content": '{"results": [{"name": "Ryokan Sakura", "price": 180}]}'},
]


def client(server, timeout: float = 5.0) -> openai.OpenAI:
    return openai.OpenAI(**client_options(server.base_url, "test-key", timeout))


def prompt_text(body: dict) -> str:
    return "\n".join(m["content"] for m in body["messages"])


def test_summary_prompt_carries_old_summary_and_dropped_turns_and_result_is_capped(llm_server) -> None:
    server = llm_server(reply=lambda body: "merged: " + prompt_text(body) * 20)
    strategy = LLMSummarizer(client(server), "test-model", max_tokens=50, max_retries=0)
    digest = strategy.apply(OLD, DROPPED, 10)
    assert server.count == 1
    body = server.requests[0]
    text = prompt_text(body)
    assert body["model"] == "test-model" and body["max_tokens"] == 50
    assert (
        OLD.summary in text
        and "[10] user: Actually my budget is 3000" in text
        and "search_hotels" in text
        and "Ryokan Sakura" in text
    )
    assert digest.summary.startswith("merged: ") and count_text(digest.summary) <= 50
    assert digest.facts == OLD.facts


@pytest.mark.parametrize(
    ("mode", "reply"),
    [("fail", None), ("garbage", None), ("empty", None), ("slow", None), ("ok", "   ")],
    ids=["http-500", "non-json-body", "no-choices", "timeout", "blank-content"],
)
def test_summary_falls_back_to_offline_result_and_retries_a_bounded_number_of_times(
    llm_server, mode: str, reply: str | None
) -> None:
    server = llm_server(
        mode=mode, delay=3.0, reply=(lambda body: reply) if reply is not None else (lambda body: "unused")
    )
    strategy = LLMSummarizer(client(server, timeout=0.3), "m", max_tokens=60, timeout=0.3, max_retries=1)
    digest = strategy.apply(OLD, DROPPED, 10)
    assert digest == RollingSummarizer(60).apply(OLD, DROPPED, 10)
    assert server.count == 2


def test_extraction_asks_for_json_with_known_facts_and_merges_over_the_offline_facts_by_key(llm_server) -> None:
    facts = [
        {"type": "constraint", "text": "Budget is 3000 euros.", "key": "Budget"},
        {"type": "bogus", "text": "Staying at Ryokan Sakura.", "key": ""},
        {"type": "fact", "text": "Ryokan Sakura booked, reference RS-20931.", "key": "booking"},  # invented
    ]
    server = llm_server(reply=lambda body: "```json\n" + orjson.dumps({"facts": facts}).decode() + "\n```")
    digest = LLMKeyInfoExtractor(client(server), "m", max_facts=10, max_retries=0).apply(OLD, DROPPED, 10)
    text = prompt_text(server.requests[0])
    assert '"key":"budget"' in text and "JSON" in text and "Actually my budget is 3000" in text
    assert "exactly as the turns write them" in text
    # the offline facts first (the tool's data stays), the model's over them by key (a key of its own under its
    # slot), the invented one gone
    assert [(f.type, f.key, f.text) for f in digest.facts] == [
        (
            "fact",
            "data:search_hotels:city=Kyoto",
            "search_hotels(city=Kyoto) -> results: (name=Ryokan Sakura; price=180)",
        ),
        ("constraint", "budget", "Budget is 3000 euros."),
        ("fact", "model:fact:staying-ryokan-sakura", "Staying at Ryokan Sakura."),
    ]
    assert all(f.source_seq == 10 for f in digest.facts[1:])


@pytest.mark.parametrize(
    "reply", ['{"facts": "nope"}', "{not json", "I could not find anything.", '{"facts": [{"type": "fact"}]}']
)
def test_extraction_falls_back_on_malformed_output(llm_server, reply: str) -> None:
    server = llm_server(reply=lambda body: reply)
    digest = LLMKeyInfoExtractor(client(server), "m", max_facts=10, max_retries=1).apply(OLD, DROPPED, 10)
    assert digest == KeyInfoExtractor(10).apply(OLD, DROPPED, 10)
    assert server.count == 2


async def test_async_merge_summary_returns_capped_text_and_raises_on_failure(llm_server) -> None:
    server = llm_server(reply=lambda body: "async summary " * 100)
    async_client = openai.AsyncOpenAI(**client_options(server.base_url, "k", 2.0))
    summary = await merge_summary(async_client, "m", OLD.summary, DROPPED, max_tokens=30, timeout=2.0)
    assert summary.startswith("async summary") and count_text(summary) <= 30
    assert OLD.summary in prompt_text(server.requests[0])
    server.mode = "fail"
    with pytest.raises(openai.InternalServerError):
        await merge_summary(async_client, "m", OLD.summary, DROPPED, max_tokens=30, timeout=2.0)
    server.mode = "slow"
    server.delay = 2.0
    with pytest.raises(openai.APITimeoutError):
        await merge_summary(async_client, "m", OLD.summary, DROPPED, max_tokens=30, timeout=0.2)


async def test_async_extract_facts_splits_out_invented_numbers_and_raises_on_bad_json(llm_server) -> None:
    server = llm_server(
        reply=lambda body: (
            '{"facts": [{"type": "constraint", "text": "Budget 3000.", "key": "budget"},'
            ' {"type": "fact", "text": "Ryokan Sakura costs 210.", "key": "price"}]}'
        )
    )
    async_client = openai.AsyncOpenAI(**client_options(server.base_url, "k", 2.0))
    found = await extract_facts(async_client, "m", OLD.facts, DROPPED, 10, max_facts=5, timeout=2.0)
    assert [(f.key, f.text) for f in found.kept] == [("budget", "Budget 3000.")]
    assert [f.key for f in found.discarded] == ["price"]  # 180 in the turns, not 210
    server.reply = lambda body: "{broken"
    with pytest.raises(ValueError):
        await extract_facts(async_client, "m", OLD.facts, DROPPED, 10, max_facts=5, timeout=2.0)
