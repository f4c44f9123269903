"""`turnstream serve` on a real worker, Apache Kafka and Redis: what a gateway gets through HTTP is what the SDK
gives, a token reaches its own tenant only, and bad input gets a status naming what is wrong."""

from __future__ import annotations

import uuid

import aiohttp
import orjson
from aiokafka import AIOKafkaConsumer, TopicPartition

from tests.integration.serve.conftest import Live, turn
from tests.support.topics import changelog
from turnstream.client import GatewayClient
from turnstream.connections import kafka_options
from turnstream.redis.connect import redis_client
from turnstream.redis.keys import KeyLayout
from turnstream.serve.openapi import openapi_document
from turnstream.settings import Settings

TURNS = "/v1/sessions/{session_id}/turns"
PROMPT = "/v1/sessions/{session_id}/prompt"
CONTEXT = "/v1/sessions/{session_id}/context"


def ids() -> tuple[str, str]:
    tag = uuid.uuid4().hex[:8]
    return f"s-{tag}", f"u-{tag}"


async def test_record_then_prompt_context_and_search_give_what_the_sdk_gives(live: Live) -> None:
    session, user = ids()
    status, reply, _ = await live.acme.call(
        "POST",
        TURNS,
        {"session_id": session},
        {
            "turns": [
                turn(session, "t1", "Hello, I am planning a trip to Lisbon.", user),
                turn(session, "t2", "Sounds lovely! What is your budget?", role="assistant"),
                turn(session, "t3", "My budget is 3500 EUR for the whole week.", user),
            ],
            "timeout_seconds": 30,
        },
    )
    assert status == 200 and reply["fresh"] is True and reply["version"] >= 1

    status, doc, _ = await live.acme.call("GET", CONTEXT, {"session_id": session}, query={"user_id": user})
    assert (
        status == 200 and doc["tenant"] == "acme" and doc["version"] == reply["version"] and doc["last_turn_id"] == "t3"
    )
    async with GatewayClient(live.settings) as sdk:
        assert (await sdk.context.get(session, "acme", user)).model_dump(mode="json") == doc  # type: ignore[union-attr]
        expected = await sdk.context.build_prompt(
            session, "What was my budget again?", tenant="acme", user_id=user, record=False
        )

    status, prompt, _ = await live.acme.call(
        "POST", PROMPT, {"session_id": session}, {"text": "What was my budget again?", "user_id": user, "record": False}
    )
    assert status == 200 and prompt["messages"] == expected.messages and prompt["recalled"] == expected.recalled
    assert prompt["messages"][-1] == {"role": "user", "content": "What was my budget again?"}
    assert any("3500 EUR" in m["text"] for m in prompt["recalled"])

    status, small, _ = await live.acme.call(
        "POST",
        PROMPT,
        {"session_id": session},
        {"text": "What was my budget again?", "user_id": user, "budget_tokens": 64},
    )
    assert status == 200 and len(small["messages"]) < len(prompt["messages"])  # the budget is the request's

    status, found, _ = await live.acme.call("POST", "/v1/search", body={"text": "Lisbon trip", "user_id": user})
    assert status == 200 and any(t["hit"] and "Lisbon" in t["text"] for t in found["archived"])
    assert all(t["session"] == f"acme:{session}" for t in found["archived"])


async def test_a_token_reaches_its_own_tenant_only_and_others_read_as_unknown(live: Live) -> None:
    session, user = ids()
    status, _, _ = await live.acme.call(
        "POST",
        TURNS,
        {"session_id": session},
        {"turns": [turn(session, "t1", "My secret code word is PELICAN.", user)], "timeout_seconds": 30},
    )
    assert status == 200
    unknown = await live.globex.call("GET", CONTEXT, {"session_id": f"never-{session}"})
    theirs = await live.globex.call("GET", CONTEXT, {"session_id": session})
    assert unknown[0] == theirs[0] == 404 and unknown[1] == theirs[1]  # same status, same body
    as_user = await live.globex.call("GET", CONTEXT, {"session_id": session}, query={"user_id": user})
    assert as_user[:2] == unknown[:2]
    for path, target in (
        ("/v1/users/{user_id}", {"user_id": user}),
        ("/v1/sessions/{session_id}", {"session_id": session}),
    ):
        erase = await live.globex.call("DELETE", path, target)
        assert erase[:2] == (404, unknown[1]), erase

    status, prompt, _ = await live.globex.call(
        "POST", PROMPT, {"session_id": session}, {"text": "What is my secret code word?", "user_id": user}
    )
    assert status == 200 and "PELICAN" not in str(prompt)  # a new, empty session of globex
    status, found, _ = await live.globex.call("POST", "/v1/search", body={"text": "secret code word", "user_id": user})
    assert status == 200 and found == {"recalled": [], "archived": []}
    forged = await live.globex.call(
        "POST",
        TURNS,
        {"session_id": session},
        {"turns": [{**turn(session, "t2", "overwrite", user), "tenant": "acme"}]},
    )
    assert forged[:2] == (404, unknown[1])

    status, doc, _ = await live.acme.call("GET", CONTEXT, {"session_id": session})
    assert status == 200 and "PELICAN" in str(doc["messages"]) and doc["last_turn_id"] == "t1"  # untouched


async def test_no_token_or_a_wrong_one_gets_401_and_the_probes_need_none(live: Live) -> None:
    session, _ = ids()
    for api in (live.acme.with_token(None), live.acme.with_token("acme-token-0123456789abcdeX")):
        status, body, headers = await api.call("GET", CONTEXT, {"session_id": session})
        assert status == 401 and body["error"] == "unauthorized" and headers["WWW-Authenticate"].startswith("Bearer")
    anonymous = live.acme.with_token(None)
    assert (await anonymous.call("GET", "/livez"))[:2] == (200, {"live": True})
    status, ready, _ = await anonymous.call("GET", "/readyz")
    assert (status, ready["ready"], ready["broker"], ready["redis"]) == (200, True, True, True)
    status, document, _ = await anonymous.call("GET", "/v1/openapi.json")
    assert status == 200 and document == openapi_document()


async def test_bad_input_gets_a_status_naming_what_is_wrong(live: Live) -> None:
    session, user = ids()
    path = {"session_id": session}
    good = turn(session, "t1", "hi", user)

    async def record(*turns: object) -> tuple[int, dict[str, str]]:
        status, body, _ = await live.acme.call("POST", TURNS, path, raw=orjson.dumps({"turns": list(turns)}))
        return status, body

    assert await record({**good, "message": {"role": "bogus"}}) == (
        422,
        {
            "error": "invalid_request",
            "field": "turns.0.message",
            "detail": "unknown role 'bogus' (expected system, user, assistant or tool)",
        },
    )
    assert (await record(good, {**good, "seq": "5"}))[1]["field"] == "turns.1.seq"  # JSON types only
    assert (await record({**good, "session_id": "other"}))[1]["field"] == "turns.0.session_id"
    assert (await record({k: v for k, v in good.items() if k != "turn_id"}))[1]["field"] == "turns.0.turn_id"
    assert (await record())[1]["field"] == "turns"
    status, body, _ = await live.acme.call("POST", TURNS, path, raw=b"not json")
    assert status == 422 and "not JSON" in body["detail"]
    status, body, _ = await live.acme.call("POST", PROMPT, {"session_id": "bad id!"}, raw=orjson.dumps({"text": "hi"}))
    assert status == 422 and body["field"] == "session_id"
    status, body, _ = await live.acme.call(
        "POST", "/v1/search", raw=orjson.dumps({"text": "x", "user_id": "a", "session_id": "b"})
    )
    assert status == 422 and "exactly one" in body["detail"]
    status, body, _ = await live.acme.call("POST", PROMPT, path, raw=orjson.dumps({"text": "a" * 1_100_000}))
    assert status == 413 and body["error"] == "too_large"
    status, body, _ = await live.acme.call("DELETE", "/v1/sessions/{session_id}", path, query={"dry_run": "maybe"})
    assert status == 422 and body["field"] == "dry_run"
    assert (await live.acme.call("GET", CONTEXT, path))[0] == 404  # nothing of it was recorded


async def test_erasing_a_user_removes_what_the_api_showed(live: Live) -> None:
    session, user = ids()
    await live.acme.call(
        "POST",
        TURNS,
        {"session_id": session},
        {"turns": [turn(session, "t1", "I live in Porto and my dog is called Rex.", user)], "timeout_seconds": 30},
    )
    status, dry, _ = await live.acme.call("DELETE", "/v1/users/{user_id}", {"user_id": user}, query={"dry_run": "true"})
    assert status == 200 and dry["dry_run"] is True and dry["counts"]["contexts"] == 1
    assert (await live.acme.call("GET", CONTEXT, {"session_id": session}))[0] == 200  # a dry run changes nothing
    status, erased, _ = await live.acme.call("DELETE", "/v1/users/{user_id}", {"user_id": user})
    assert status == 200 and erased["erased"] == f"user acme:{user}" and erased["counts"]["contexts"] == 1
    assert (await live.acme.call("GET", CONTEXT, {"session_id": session}))[0] == 404
    status, found, _ = await live.acme.call("POST", "/v1/search", body={"text": "dog Rex Porto", "user_id": user})
    assert found == {"recalled": [], "archived": []}
    assert (await live.acme.call("DELETE", "/v1/users/{user_id}", {"user_id": user}))[0] == 404  # nothing left


async def turn_ends(settings: Settings) -> dict[TopicPartition, int]:
    """The turns topic's end offsets: any turn or control record moves one."""
    consumer = AIOKafkaConsumer(**kafka_options(settings), enable_auto_commit=False)
    await consumer.start()
    try:
        partitions = [TopicPartition(settings.turns_topic, p) for p in range(settings.turn_partitions)]
        return dict(await consumer.end_offsets(partitions))
    finally:
        await consumer.stop()


async def keys_of(settings: Settings, *names: str) -> set[str]:
    """The deployment's Redis keys that name one of `names`, but the forget markers an erasure leaves."""
    markers = {KeyLayout(settings.topic_prefix).forgotten(f"acme:{name}") for name in names}
    redis = redis_client(settings)
    try:
        found = {key.decode() async for key in redis.scan_iter(f"{settings.topic_prefix}:*", count=1000)}
    finally:
        await redis.aclose()
    return {key for key in found - markers if any(name in key for name in names)}


async def test_a_prompt_creates_nothing_for_an_erased_or_unknown_session_and_user(live: Live) -> None:
    erased_session, erased_user = ids()
    status, _, _ = await live.acme.call(
        "POST",
        TURNS,
        {"session_id": erased_session},
        {"turns": [turn(erased_session, "t1", "My locker code is 4471.", erased_user)], "timeout_seconds": 30},
    )
    assert status == 200
    user_path = "/v1/users/{user_id}"
    assert (await live.acme.call("DELETE", user_path, {"user_id": erased_user}))[0] == 200
    assert (await live.acme.call("DELETE", user_path, {"user_id": erased_user}))[0] == 404
    new_session, new_user = ids()  # never had a turn
    ends = await turn_ends(live.settings)

    question = "What is my locker code?"
    for session, user in ((erased_session, erased_user), (new_session, new_user)):
        for body in ({"text": question, "user_id": user}, {"text": question, "user_id": user}, {"text": question}):
            status, prompt, _ = await live.acme.call("POST", PROMPT, {"session_id": session}, body)
            assert status == 200 and prompt["messages"] == [{"role": "user", "content": question}], prompt
        status, found, _ = await live.acme.call("POST", "/v1/search", body={"text": "locker code", "user_id": user})
        assert (status, found) == (200, {"recalled": [], "archived": []})

    for session, user in ((erased_session, erased_user), (new_session, new_user)):
        for path, target in ((user_path, {"user_id": user}), ("/v1/sessions/{session_id}", {"session_id": session})):
            status, body, _ = await live.acme.call("DELETE", path, target, query={"dry_run": "true"})
            assert (status, body["error"]) == (404, "not_found"), (path, target, body)  # an erasure stays whole
    assert await keys_of(live.settings, erased_session, erased_user, new_session, new_user) == set()
    assert await turn_ends(live.settings) == ends  # no control record: no worker makes a Table row of a prompt
    assert not [key for key, _, _ in await changelog(live.settings) if key == f"acme:{new_session}"]


async def test_every_route_is_timed_in_the_metrics(live: Live) -> None:
    session, _ = ids()
    await live.acme.call("GET", CONTEXT, {"session_id": session})
    async with aiohttp.ClientSession() as http:
        async with http.get(live.served.url + "metrics") as reply:
            text = await reply.text()
    assert (
        'turnstream_serve_request_seconds_bucket{le="0.005",method="GET",route="/v1/sessions/{session_id}/context"}'
        in text
    )
    assert 'turnstream_serve_replies_total{method="GET",route="/v1/sessions/{session_id}/context",status="404"}' in text
    assert live.acme.contract.checked > 0
