"""An agent re-reads a tool result compacted out of its context: through a real worker (Kafka, Redis, the embedding
process), the recall tool and the search find the result by an id in it, whole, with its step and time, ahead of a
shorter result that holds only the id's parts; the semantic index holds the id as one term."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import orjson
from redis.asyncio import Redis

from tests.support.pipeline import produce, until, wait_for_versions
from tests.support.worker import running_worker
from turnstream.client import ContextClient, SyncContextClient
from turnstream.integrations import langchain
from turnstream.integrations.openai_tools import RecallHandler
from turnstream.integrations.recall import NAME
from turnstream.kafka.admin import ensure_topics
from turnstream.redis.keys import KeyLayout
from turnstream.schemas.ids import owner_key
from turnstream.settings import Settings

START = 1_700_000_000.0  # 14 November 2023, 22:13:20 UTC
STEP_SECONDS = 60.0
CUSTOMER = {
    "customer": {
        "id": "cust_88213",
        "name": "Maya Lind",
        "membership": "gold",
        "payment_methods": [
            {"id": "voucher_5518230", "type": "voucher", "amount": 200, "currency": "USD"},
            {"id": "card_9920117", "type": "credit_card", "brand": "visa", "last4": "3311"},
        ],
        "bookings": [
            {"id": "KX4Q2P", "route": "PEK-NRT", "flight": "CA929", "status": "confirmed"},
            {"id": "ZR81LM", "hotel": "TYO-10477", "nights": 3, "status": "confirmed"},
        ],
    }
}
CUSTOMER_JSON = orjson.dumps(CUSTOMER, option=orjson.OPT_INDENT_2).decode()
"""Pretty JSON, as tools often answer: archived on one line."""
DISTRACTOR = '{"voucher": "voucher_5518231", "status": "expired", "ref": "5518230"}'
"""A short result holding both parts of the id ("voucher", "5518230") but not the id: split into its parts, the id
would rank this one first."""


def call(n: int, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": f"call_{n}",
                "type": "function",
                "function": {"name": name, "arguments": orjson.dumps(arguments).decode()},
            }
        ],
    }


def result(n: int, content: str) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": f"call_{n}", "content": content}


def trace(session: str, user: str) -> list[dict[str, Any]]:
    """A booking agent's session: the customer record early, then enough restaurant searches that it is dropped."""
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "You are a travel agent. Confirm every change with the user before booking."},
        {"role": "user", "content": "I want to change my Tokyo trip. My customer id is cust_88213."},
        call(1, "get_customer", {"customer_id": "cust_88213"}),
        result(1, CUSTOMER_JSON),
        {"role": "assistant", "content": "I see two confirmed bookings, a flight and a hotel. What would you like?"},
        {"role": "user", "content": "Is my old voucher still good?"},
        call(2, "lookup_voucher", {"code": "5518231"}),
        result(2, DISTRACTOR),
        {"role": "assistant", "content": "That older voucher has expired."},
    ]
    for n in range(3, 15):
        messages += [
            {"role": "user", "content": f"Any good ramen place near Asakusa for day {n}?"},
            call(n, "search_restaurants", {"area": "Asakusa", "cuisine": "ramen", "day": n}),
            result(
                n,
                orjson.dumps(
                    [{"id": f"R-{n}{k}", "name": f"Ramen house {k}", "rating": 4.2} for k in range(3)]
                ).decode(),
            ),
            {"role": "assistant", "content": f"Ramen house 1 is a short walk from the hotel on day {n}."},
        ]
    messages.append({"role": "user", "content": "Good. Now pay the flight change with my voucher."})
    return [
        {
            "turn_id": f"{session}-{n}",
            "session_id": session,
            "tenant": "acme",
            "user_id": user,
            "seq": n,
            "ts": START + n * STEP_SECONDS,
            "message": message,
        }
        for n, message in enumerate(messages)
    ]


WHOLE = f'get_customer({{"customer_id":"cust_88213"}}) → {" ".join(CUSTOMER_JSON.split())}'
"""The archived result: the call it answers, then the result on one line, every value of it."""
LINE = f"Tool (step 3, {datetime.fromtimestamp(START + 3 * STEP_SECONDS, UTC):%H:%M}): {WHOLE}"
DAY = "[14 November 2023]"


async def test_a_dropped_tool_result_comes_back_whole_by_an_id_in_it(settings: Settings) -> None:
    settings = settings.model_copy(update={"embeddings": "local", "budget_tokens": 700})
    turns = trace("trip-1", "maya")
    owner = owner_key("maya", "acme", "trip-1")
    await ensure_topics(settings)
    with running_worker(settings) as worker:
        await produce(settings, turns)
        async with ContextClient.from_settings(settings) as client:
            docs = await wait_for_versions(client, {"trip-1": len(turns)}, worker, tenant="acme")
            # the result itself left the context (the key facts may still name its ids; the data is gone)
            context = docs["trip-1"].messages
            assert not [m for m in context if m.get("tool_call_id") == "call_1" or m.get("content") == CUSTOMER_JSON]
            keys = KeyLayout(settings.topic_prefix).owner(owner)
            redis: Redis = client.store.redis
            await until(lambda: _vectors_at_least(redis, keys.vectors, len(turns) - 1), timeout=120)
            short = await redis.hget(keys.positions, "acme:trip-1#3")
            assert isinstance(short, bytes)
            # the semantic index: the id is one term, at full weight, for the turn that holds it
            postings = await redis.hget(keys.semantic, "voucher_5518230")
            assert isinstance(postings, bytes) and f"{short.decode()}:1000" in postings.decode().split(",")
            found = await client.search("voucher_5518230", user_id="maya", tenant="acme")
            tool = langchain.recall_tool(client, user_id="maya", tenant="acme")
            message = await tool.ainvoke(
                {"name": NAME, "args": {"query": "KX4Q2P"}, "id": "call_9", "type": "tool_call"}
            )
        with SyncContextClient.from_settings(settings) as sync_client:
            plain = RecallHandler(sync_client, user_id="maya", tenant="acme")('{"query": "voucher_5518230"}')
    best = max((t for t in found.archived if t["hit"]), key=lambda t: t["score"])
    assert (best["position"], best["role"], best["text"]) == (3, "tool", WHOLE)
    assert best["ts"] == START + 3 * STEP_SECONDS and best["line"] == f"{DAY} {LINE}"
    for text in (plain, str(message.content)):
        lines = text.splitlines()
        assert LINE in lines and DAY in lines[: lines.index(LINE)], text


async def _vectors_at_least(redis: Redis, key: str, wanted: int) -> bool:
    return int(await redis.hlen(key)) >= wanted
