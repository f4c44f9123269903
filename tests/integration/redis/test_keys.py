"""Session and owner keys through a real broker and Redis: ids that used to collide stay apart, and turns
keyed by anything but their session key are forwarded to their session's partition and applied once, in order."""

from __future__ import annotations

import asyncio
import time
import urllib.request
from typing import Any

import orjson
from aiokafka import AIOKafkaConsumer
from aiokafka.partitioner import DefaultPartitioner
from prometheus_client.parser import text_string_to_metric_families

from tests.support.cli import turnstream
from tests.support.conversations import turns_for
from tests.support.pipeline import assert_context_matches_batch
from tests.support.worker import running_worker, wait_until_drained
from turnstream.client import ContextClient, TurnProducer
from turnstream.kafka.admin import ensure_topics
from turnstream.schemas.headers import REASON_HEADER
from turnstream.schemas.ids import owner_key, session_key
from turnstream.settings import Settings
from turnstream.stack.services import free_port

WAIT = 60.0


def chat(session_id: str, user_id: str | None, tenant: str | None, lines: list[str]) -> list[dict[str, Any]]:
    """A user's lines, each answered, as turns of one session."""
    messages = [
        m for line in lines for m in ({"role": "user", "content": line}, {"role": "assistant", "content": "Noted."})
    ]
    return [
        {"turn_id": f"t{seq}", "session_id": session_id, "tenant": tenant, "user_id": user_id, "seq": seq, "message": m}
        for seq, m in enumerate(messages)
    ]


def memory_texts(settings: Settings, *args: str) -> list[str]:
    result = turnstream(settings, "memory", "list", *args)
    assert result.returncode == 0, result.stderr
    return sorted(m["text"] for m in orjson.loads(result.stdout))


async def test_ids_that_used_to_collide_get_contexts_and_memories_of_their_own(settings: Settings) -> None:
    settings = settings.model_copy(update={"turn_partitions": 2})
    sessions = {
        ("acme", "s1"): chat("s1", "alice", "acme", ["My budget is 3500 EUR.", "I prefer boutique hotels."]),
        (None, "s2"): chat("s2", "acme:alice", None, ["My budget is 900 EUR."]),
        ("co", "lide"): chat("lide", None, "co", ["My name is Ana.", "I am allergic to peanuts."]),
        (None, "co:lide"): chat("co:lide", None, None, ["My name is Bruno."]),
        (None, "bob"): chat("bob", None, None, ["My budget is 120 EUR."]),  # anonymous session "bob" ...
        (None, "s3"): chat("s3", "bob", None, ["My budget is 7000 EUR."]),  # ... and user "bob"
    }
    await ensure_topics(settings)
    with running_worker(settings):
        async with TurnProducer(settings) as producer:
            for turns in sessions.values():
                for turn in turns:
                    await producer.send(turn)
            await producer.flush()
        async with ContextClient.from_settings(settings) as client:
            for (tenant, sid), turns in sessions.items():
                result = await client.wait_for(
                    sid, turns[-1]["turn_id"], WAIT, tenant=tenant, user_id=turns[0]["user_id"]
                )
                assert result.fresh, (tenant, sid)
                doc = result.doc
                # the session's own turns and nothing else: one Table row and one context per session
                assert doc is not None and doc.version == len(turns) and (doc.tenant, doc.session_id) == (tenant, sid)
                assert doc.messages == [t["message"] for t in turns]
                assert await client.get(sid, tenant=tenant) == doc  # found through the owner pointer as well

    assert memory_texts(settings, "alice", "--tenant", "acme") == [
        "I prefer boutique hotels.",
        "My budget is 3500 EUR.",
    ]
    assert memory_texts(settings, "acme:alice") == ["My budget is 900 EUR."]
    assert memory_texts(settings, "--session", "lide", "--tenant", "co") == [
        "I am allergic to peanuts.",
        "My name is Ana.",
    ]
    assert memory_texts(settings, "--session", "co:lide") == ["My name is Bruno."]
    assert memory_texts(settings, "bob") == ["My budget is 7000 EUR."]
    assert memory_texts(settings, "--session", "bob") == ["My budget is 120 EUR."]
    assert owner_key(None, "co", "lide") != owner_key(None, None, "co:lide")


def partition_of(key: bytes, partitions: int) -> int:
    return DefaultPartitioner()(key, list(range(partitions)), list(range(partitions)))


def rekeyed_counts(settings: Settings) -> dict[str, float]:
    with urllib.request.urlopen(f"http://{settings.web_bind}:{settings.metrics_port}/metrics", timeout=5) as response:
        families = text_string_to_metric_families(response.read().decode())
        return {
            s.labels["reason"]: s.value
            for f in families
            if f.name == "turnstream_rekeyed_turns"
            for s in f.samples
            if s.name.endswith("_total")
        }


async def forwarded_records(settings: Settings, count: int) -> list[Any]:
    """The records the worker re-produced to the turns topic (they carry a reason header)."""
    consumer = AIOKafkaConsumer(
        settings.turns_topic,
        bootstrap_servers=settings.bootstrap_servers,
        auto_offset_reset="earliest",
        group_id=f"{settings.topic_prefix}-reader",
    )
    await consumer.start()
    found: list[Any] = []
    try:
        deadline = time.monotonic() + WAIT
        while time.monotonic() < deadline:  # until `count` are in and a poll finds nothing more
            batch = await consumer.getmany(timeout_ms=1000)
            found += [r for rs in batch.values() for r in rs if REASON_HEADER in dict(r.headers)]
            if not batch and len(found) >= count:
                break
    finally:
        await consumer.stop()
    return found


async def wait_for_last(client: ContextClient, turns: list[dict[str, Any]]) -> None:
    result = await client.wait_for(turns[0]["session_id"], turns[-1]["turn_id"], WAIT, user_id=turns[0]["user_id"])
    assert result.fresh, (
        f"{turns[-1]['turn_id']} not applied within {WAIT}s: version {result.doc and result.doc.version}"
    )


async def test_turns_without_their_session_key_are_forwarded_and_applied_once_in_order(settings: Settings) -> None:
    partitions = 4
    settings = settings.model_copy(
        update={"turn_partitions": partitions, "metrics_port": free_port(), "budget_tokens": 600}
    )
    null_keyed, wrong_keyed = turns_for("nk", seed=1, count=12), turns_for("wk", seed=2, count=12)
    home = partition_of(b"wk", partitions)
    # two wrong keys, alternated turn by turn: one on the session's own partition, one elsewhere
    candidates = [f"wk-wrong-{i}".encode() for i in range(100)]
    wrong_keys = [
        next(k for k in candidates if partition_of(k, partitions) == home),
        next(k for k in candidates if partition_of(k, partitions) != home),
    ]
    await ensure_topics(settings)
    # the whole backlog waits before the worker starts: it then reads one partition after another, the
    # order that scattered turns used to be applied in (4 of the 12 null-keyed turns were kept that way)
    async with TurnProducer(settings) as producer:
        for batch in range(6):
            for n in (2 * batch, 2 * batch + 1):
                # no key: each batch on another partition, as Java's sticky partitioner places them
                await producer.producer.send(
                    settings.turns_topic, orjson.dumps(null_keyed[n]), key=None, partition=batch % partitions
                )
                await producer.send_raw(wrong_keys[n % 2], orjson.dumps(wrong_keyed[n]))
            await producer.flush()

    with running_worker(settings) as worker:
        async with ContextClient.from_settings(settings) as client:
            await asyncio.gather(wait_for_last(client, null_keyed), wait_for_last(client, wrong_keyed))
            await wait_until_drained(settings, worker)  # every forwarded copy is handled: one applied twice would show
            docs, applied = {}, {}
            for sid, turns in (("nk", null_keyed), ("wk", wrong_keyed)):
                docs[sid] = await client.get(sid, user_id=turns[0]["user_id"])
                keys = client.store.keys(owner_key(turns[0]["user_id"], None, sid), session_key(sid))
                applied[sid] = await client.store.redis.zrange(keys.applied, 0, -1, withscores=True)
        counts = rekeyed_counts(settings)
        forwarded = await forwarded_records(settings, 24)

    for sid, turns in (("nk", null_keyed), ("wk", wrong_keyed)):
        # per turn: applied exactly once, in order. A turn's score is the version of the first context written
        # with it, which a batch's turns share: never below the turn's place, never below an earlier turn's.
        versions = {turn_id.decode(): int(version) for turn_id, version in applied[sid]}
        assert sorted(versions) == sorted(t["turn_id"] for t in turns)
        in_order = [versions[t["turn_id"]] for t in turns]
        assert in_order == sorted(in_order) and all(v >= n + 1 for n, v in enumerate(in_order)), in_order
        assert docs[sid].version == len(turns)
        assert_context_matches_batch(docs[sid], turns, settings)
    assert (counts["null_key"], counts["wrong_key"]) == (12.0, 12.0)
    assert all(r.partition == partition_of(r.key, partitions) for r in forwarded)  # each on its session's partition
    assert {r.key for r in forwarded} == {b"nk", b"wk"} and len(forwarded) == 24 + counts.get("reordered", 0)
