"""The Redis layout as a contract: a context read with plain Redis commands (as redis-cli sends them), no turnstream client.

Turns go in as a gateway in another language sends them (key = session key, murmur2, JSON value); the
reads are docs/protocol.md's "Reading from other languages" table, command by command.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import jsonschema
import orjson
import pytest
from aiokafka import AIOKafkaProducer
from aiokafka.partitioner import DefaultPartitioner
from redis import Redis

import turnstream
from tests.support.worker import running_worker
from turnstream.kafka.admin import ensure_topics
from turnstream.redis.scripts import RECALL
from turnstream.schemas.export import json_schema
from turnstream.settings import Settings

TENANT, SESSION, USER = "acme", "s-plain", "maya"
RECALL_LUA = Path(turnstream.__file__).parent / "redis" / "lua" / "recall.lua"
MESSAGES = [
    {"role": "user", "content": "Hi, I'm planning a trip to Lisbon in May."},
    {"role": "assistant", "content": "Lovely! What is your budget?"},
    {"role": "user", "content": "My budget is 3500 EUR for the whole trip."},
    {"role": "assistant", "content": "Noted: 3500 EUR."},
    {"role": "user", "content": "Which neighbourhood should we stay in?"},
]


def turn(seq: int) -> dict[str, Any]:
    return {
        "turn_id": f"t{seq}",
        "session_id": SESSION,
        "tenant": TENANT,
        "user_id": USER,
        "seq": seq,
        "message": MESSAGES[seq],
    }


async def send(settings: Settings, turns: list[dict[str, Any]]) -> None:
    """As any Java-compatible producer: key = `tenant:session_id`, murmur2, acks=all, JSON value."""
    producer = AIOKafkaProducer(
        bootstrap_servers=settings.bootstrap_servers, acks="all", partitioner=DefaultPartitioner()
    )
    await producer.start()
    try:
        for t in turns:
            await producer.send_and_wait(settings.turns_topic, orjson.dumps(t), key=f"{TENANT}:{SESSION}".encode())
    finally:
        await producer.stop()


def wait_until_applied(redis: Redis, context: str, applied: str, turn_id: str, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while redis.execute_command("ZSCORE", applied, turn_id) is None:
        assert time.monotonic() < deadline, f"{turn_id} not applied in {timeout}s"
        time.sleep(0.2)


@pytest.mark.timeout(300)
async def test_a_gateway_reads_the_context_with_plain_redis_commands(settings: Settings) -> None:
    p, s, o = settings.topic_prefix, f"{TENANT}:{SESSION}", f"{TENANT}:{USER}"
    context, applied = f"{p}:ctx:{{{o}}}:{s}", f"{p}:applied:{{{o}}}:{s}"
    await ensure_topics(settings)
    assert settings.redis_url
    with running_worker(settings), Redis.from_url(settings.redis_url) as redis:
        await send(settings, [turn(seq) for seq in range(4)])
        wait_until_applied(redis, context, applied, "t3")

        # the owner pointer leads a reader that does not know the user to the same keys
        assert redis.execute_command("GET", f"{p}:owner:{{{s}}}") == o.encode()
        doc = orjson.loads(redis.execute_command("HGET", context, "doc"))
        jsonschema.validate(doc, json_schema("context"))
        assert doc["messages"] == MESSAGES[:4] and doc["last_turn_id"] == "t3"
        version, last = redis.execute_command("HMGET", context, "version", "last_turn_id")
        assert int(version) == doc["version"] and last == b"t3"
        assert int(float(redis.execute_command("ZSCORE", applied, "t3"))) <= doc["version"]
        assert redis.execute_command("ZSCORE", applied, "t4") is None

        # told of the next version: subscribe, see the confirmation, then the turn's version arrives
        pubsub = redis.pubsub()
        pubsub.subscribe(f"{p}:updates:{s}")  # SUBSCRIBE
        assert pubsub.get_message(timeout=5)["type"] == "subscribe"
        await send(settings, [turn(4)])
        deadline, published = time.monotonic() + 120, None
        while published is None and time.monotonic() < deadline:
            message = pubsub.get_message(timeout=1)
            if message and message["type"] == "message":
                published = int(message["data"])
        pubsub.close()
        assert published is not None and published > doc["version"]
        wait_until_applied(redis, context, applied, "t4")
        assert orjson.loads(redis.execute_command("HGET", context, "doc"))["messages"][-1] == MESSAGES[4]

        # the read script, loaded from the file the wheel ships, with the keys docs/scripts.md names (put in its order
        # by the spec it is generated from): only looking (record = 0)
        sha = redis.execute_command("SCRIPT", "LOAD", RECALL_LUA.read_text())
        keys, args = RECALL.call(
            context=context,
            profile=f"{p}:profile:{{{o}}}",
            memories=f"{p}:mem:{{{o}}}",
            access=f"{p}:memaccess:{{{o}}}",
            injected=f"{p}:injected:{{{o}}}:{s}",
            archive=f"{p}:arcent:{{{o}}}",
            positions=f"{p}:arcat:{{{o}}}",
            entry_terms=f"{p}:arcrec:{{{o}}}",
            dictionary=f"{p}:arcdict:{{{o}}}",
            vectors=f"{p}:arcvec:{{{o}}}",
            semantic=f"{p}:arcsem:{{{o}}}",
            keyword_sets=[f"{p}:memkw:{{{o}}}:budget"],
            postings=[f"{p}:arcpost:{{{o}}}:budget"],
            k=5,
            window=settings.recall_dedup_window,
            ttl=settings.session_ttl_seconds,
            now=time.time(),
            record=0,
            hits=32,
            postings_per_term=64,
            scored_terms=8,
            neighbours=1,
            terms="budget",
            weight_scale=10_000,
            pool=0,
            semantic_terms="",
            vector_tag="",
        )
        reply = redis.execute_command("EVALSHA", sha, len(keys), *keys, *args)
        stored, profile, _profile_version, memories, archive, pool, vectors = reply
        assert (pool, vectors) == (b"[]", [])  # no semantic share asked (pool 0)
        assert stored == redis.execute_command("HGET", context, "doc")
        assert any("3500" in orjson.loads(raw)["text"] for raw in memories[0::3])
        found = orjson.loads(archive)  # [score, entry]: hits best first, each followed by its neighbours (score 0)
        assert found[0][0] > 0 and "budget" in found[0][1]["text"]
        assert MESSAGES[2]["content"] in [entry["text"] for _, entry in found]
        assert redis.execute_command("EXISTS", f"{p}:injected:{{{o}}}:{s}") == 0  # looking records nothing
