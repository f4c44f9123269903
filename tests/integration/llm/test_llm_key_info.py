"""Key info by the LLM on the stream, against a real local server speaking the chat completions API: well-formed
extractions reach the context and the prompt, invented identifiers never do, malformed JSON leaves the offline
facts standing, counted and logged once per request; the summarizer sends the extraction beside the summary merge,
drops it with a failed summary, and not at all with TURNSTREAM_LLM_KEY_INFO=false."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import openai
import orjson

from tests.support.llm_server import LLMServer
from tests.support.metrics import scrape
from tests.support.pipeline import produce, wait_for_versions
from tests.support.worker import running_worker
from turnstream.agents.summarizer import Summarizer
from turnstream.client import ContextClient
from turnstream.kafka.admin import ensure_topics
from turnstream.llm.calls import client_options
from turnstream.redis.memory_store import MemoryStore
from turnstream.schemas.context import ContextDoc
from turnstream.schemas.summaries import SummaryRequest
from turnstream.settings import Settings
from turnstream.stack.services import free_port

GOOD, BAD = "kinfo-good", "kinfo-bad"
INVENTED = "ZZ9999X"
FLIGHT_FACT = "The user chose flight CA929 (3100)."
HOTEL_FACT = "The user stays at Asakusa Inn, TYO-10477."
ALLERGY_FACT = "No seafood: the user is allergic to it."
SUMMARY = "LLM-SUMMARY: the traveller is planning Tokyo."


def call(call_id: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    function = {"name": name, "arguments": orjson.dumps(arguments).decode()}
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": call_id, "type": "function", "function": function}],
    }


def trip(tag: str, fillers: int = 40) -> list[dict[str, Any]]:
    """A trip agent's session: two searches, the user's choices, then questions enough to drop them all.
    `tag` is in every dropped turn, so the server can tell the sessions' prompts apart."""
    flights = [{"no": "CA929", "price": 3100}, {"no": "MU523", "price": 3400}, {"no": "NH920", "price": 3900}]
    hotels = [
        {"id": "TYO-10477", "name": "Asakusa Inn", "price": 820},
        {"id": "TYO-20931", "name": "Shinjuku Tower", "price": 1400},
    ]
    messages = [
        {"role": "system", "content": "You are a travel agent. Book what the user chooses."},
        {"role": "user", "content": "Plan Tokyo for two people, budget 20,000 yuan."},
        call("c1", "search_flights", {"to": "TYO", "agency": tag}),
        {"role": "tool", "tool_call_id": "c1", "content": orjson.dumps({"agency": tag, "flights": flights}).decode()},
        {"role": "user", "content": f"I'll take CA929, it is cheaper. I am allergic to seafood. ({tag})"},
        call("c2", "search_hotels", {"city": "Tokyo", "agency": tag}),
        {"role": "tool", "tool_call_id": "c2", "content": orjson.dumps({"agency": tag, "hotels": hotels}).decode()},
        {"role": "user", "content": f"Stay at the Asakusa one. ({tag})"},
    ]
    for n in range(fillers):
        messages.append({"role": "user", "content": f"What is restaurant {n} near the hotel like? ({tag})"})
        messages.append(
            {
                "role": "assistant",
                "content": f"Restaurant {n} ({tag}) serves noodles; " + "it is quiet and close to the station. " * 6,
            }
        )
    return messages


def turns(session_id: str) -> list[dict[str, Any]]:
    return [
        {
            "turn_id": f"{session_id}-{seq}",
            "session_id": session_id,
            "user_id": f"user-{session_id}",
            "seq": seq,
            "ts": 1_700_000_000 + seq,
            "message": message,
        }
        for seq, message in enumerate(trip(session_id))
    ]


def is_extraction(body: dict[str, Any]) -> bool:
    return str(body["messages"][0]["content"]).startswith("Extract key information")


def removed_turns(body: dict[str, Any]) -> str:
    return str(body["messages"][-1]["content"]).split("Removed turns:", 1)[-1]


def reply(body: dict[str, Any]) -> str:
    """A summary for every summary prompt; for extractions, JSON facts naming what the span holds plus one
    invented booking reference (the good session), or malformed JSON (the bad one)."""
    if not is_extraction(body):
        return SUMMARY
    turns_text = removed_turns(body)
    if BAD in turns_text:
        return '{"facts": [{"type": "fact", "text": "CA929 chosen", '  # cut off mid-object
    facts = [{"type": "fact", "text": f"Booking reference {INVENTED} is confirmed.", "key": "booking reference"}]
    if "CA929" in turns_text:
        facts.append({"type": "event", "text": FLIGHT_FACT, "key": "flight choice"})
        facts.append({"type": "constraint", "text": ALLERGY_FACT, "key": "allergy"})  # the offline fact's key
    if "TYO-10477" in turns_text:
        facts.append({"type": "event", "text": HOTEL_FACT, "key": "hotel choice"})
    return "```json\n" + orjson.dumps({"facts": facts}).decode() + "\n```"


def fact_texts(doc: ContextDoc) -> dict[str, str]:
    return {str(fact.key): fact.text for fact in doc.facts}


def settled(docs: dict[str, ContextDoc], server: LLMServer, answered: int) -> bool:
    good, bad = fact_texts(docs[GOOD]), docs[BAD]
    return (
        good.get("model:flight choice") == FLIGHT_FACT
        and good.get("model:hotel choice") == HOTEL_FACT
        and SUMMARY in bad.summary
        and server.count == answered
    )


async def test_llm_key_info_reaches_the_prompt_grounded_and_malformed_replies_fall_back(
    settings: Settings, llm_server
) -> None:
    server = llm_server(reply=reply)
    settings = settings.model_copy(
        update={
            "budget_tokens": 2000,
            "summary_max_tokens": 120,
            "turn_partitions": 2,
            "openai_base_url": server.base_url,
            "llm_model": "local-test",
            "llm_timeout_seconds": 2.0,
            "llm_max_retries": 1,
            "metrics_port": free_port(),
        }
    )
    sessions = {sid: turns(sid) for sid in (GOOD, BAD)}
    await ensure_topics(settings)
    with running_worker(settings) as worker:
        async with ContextClient.from_settings(settings) as client:
            for start in range(0, 90, 15):  # in bursts, so answers come back between them
                await produce(settings, [t for ts in sessions.values() for t in ts[start : start + 15]])
                await wait_for_versions(client, {sid: min(start + 15, len(ts)) for sid, ts in sessions.items()}, worker)
                await asyncio.sleep(1.0)
            docs = await wait_for_versions(client, {sid: len(ts) for sid, ts in sessions.items()}, worker)
            deadline, last = time.monotonic() + 60, -1
            # quiet: both sessions' answers are in, and no request went out since the last look
            while time.monotonic() < deadline and not settled(docs, server, last):
                last = server.count
                await asyncio.sleep(2.0)
                docs = {sid: doc for sid in sessions if (doc := await client.get(sid)) is not None}
            prompt = await client.build_prompt(GOOD, "Book the flight and the hotel now.", user_id=f"user-{GOOD}")
            metrics = scrape(settings.metrics_port or 0)
        log = worker.log()

    good, bad = fact_texts(docs[GOOD]), fact_texts(docs[BAD])
    # well-formed extractions are in the context's facts, over the offline fact of the same key, a new key under the
    # model's own slot, and in the prompt
    assert good["model:flight choice"] == FLIGHT_FACT and good["model:hotel choice"] == HOTEL_FACT
    assert good["allergy"] == ALLERGY_FACT
    prompt_text = orjson.dumps(prompt.messages).decode()
    assert FLIGHT_FACT in prompt_text and HOTEL_FACT in prompt_text
    # the invented booking reference was discarded: no context and no prompt holds it
    assert INVENTED not in orjson.dumps([doc.model_dump() for doc in docs.values()]).decode()
    assert INVENTED not in prompt_text
    discarded = sum(value for _, value in metrics.get("turnstream_llm_facts_discarded_total", []))
    assert discarded >= 1
    # malformed JSON: the summary still applied, the offline facts stand (their own keys and words)
    assert SUMMARY in docs[BAD].summary
    assert (
        "I am allergic to seafood." in bad["allergy"] and not {"model:flight choice", "model:hotel choice"} & bad.keys()
    )
    # each failed extraction tried twice (one retry), counted and logged once
    bad_asks = sum(1 for body in server.requests if is_extraction(body) and BAD in removed_turns(body))
    failed_lines = log.count(f"LLM key info for {BAD} failed")
    failed_count = sum(
        value
        for labels, value in metrics.get("turnstream_llm_requests_total", [])
        if labels["outcome"] == "facts_failed"
    )
    assert bad_asks >= 2 and failed_lines == failed_count == bad_asks // 2, (bad_asks, failed_lines, failed_count)
    for doc in docs.values():
        assert doc.tokens.after <= settings.budget_tokens


async def test_the_summarizer_sends_the_extraction_beside_the_merge_or_not_at_all(
    redis_settings: Settings, llm_server
) -> None:
    replies = {"summary": SUMMARY}

    def answer(body: dict[str, Any]) -> str:
        return reply(body) if is_extraction(body) else replies["summary"]

    server = llm_server(reply=answer)
    settings = redis_settings.model_copy(
        update={"openai_base_url": server.base_url, "llm_timeout_seconds": 2.0, "llm_max_retries": 1}
    )
    dropped = trip(GOOD, fillers=0)[2:]
    request = SummaryRequest("s", 1, "", dropped, "u", (("constraint", "I am allergic to seafood.", "allergy", 4),), 2)
    memory = MemoryStore.from_settings(settings)
    client = openai.AsyncOpenAI(**client_options(server.base_url, "k", 2.0))
    try:
        result = await Summarizer(settings, client, memory).answer(request)
        assert result.summary == SUMMARY and result.facts is not None
        # grounded facts only, from the position the span starts at; the known fact's key reused
        assert {(kind, text, key, seq) for kind, text, key, seq in result.facts} == {
            ("event", FLIGHT_FACT, "flight choice", 2),
            ("constraint", ALLERGY_FACT, "allergy", 2),
            ("event", HOTEL_FACT, "hotel choice", 2),
        }
        extraction = next(body for body in server.requests if is_extraction(body))
        assert '"key":"allergy"' in extraction["messages"][-1]["content"] and "[2] assistant" in removed_turns(
            extraction
        )

        server.requests.clear()
        replies["summary"] = "  "  # a blank summary fails, retried once: the answer carries nothing
        failed = await Summarizer(settings, client, memory).answer(request)
        assert (failed.summary, failed.facts) == (None, None)
        assert sum(not is_extraction(body) for body in server.requests) == 2

        server.requests.clear()
        replies["summary"] = SUMMARY
        off = settings.model_copy(update={"llm_key_info": False})
        plain = await Summarizer(off, client, memory).answer(request)
        assert (plain.summary, plain.facts) == (SUMMARY, None)
        assert not any(is_extraction(body) for body in server.requests)
    finally:
        await memory.aclose()
        await client.close()
