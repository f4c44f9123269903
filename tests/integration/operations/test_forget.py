"""`turnstream forget` on a running worker: nothing of the erased user or session is left in Redis but the forget
markers, their Table rows become markers, and replaying their turns brings nothing back."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from tests.support.forgetting import TENANT, conversation, forget
from tests.support.pipeline import wait_for_versions
from tests.support.topics import changelog
from tests.support.worker import running_worker
from turnstream.client import ContextClient, TurnProducer
from turnstream.kafka.admin import ensure_topics
from turnstream.schemas.ids import partition_of
from turnstream.settings import Settings

pytestmark = pytest.mark.integration


async def redis_keys(client: ContextClient, prefix: str) -> set[str]:
    return {key.decode() async for key in client.store.redis.scan_iter(match=f"{prefix}:*", count=1000)}


async def assert_session_gone(client: ContextClient, owner: str, session: str) -> None:
    """Nothing of `session` in its owner's data: no context, pointer, archived turn or memory taken from it."""
    redis, layout = client.store.redis, client.store.layout
    assert not await redis.exists(*layout.session(owner, session)[:3], layout.owner_pointer(session))
    keys = layout.owner(owner)
    assert not [f for f in await redis.hkeys(keys.positions) if f.decode().startswith(session + "#")]
    assert await client.memory.list(owner) == []  # all of them came from that one session
    assert [k async for k in redis.scan_iter(match=keys.keyword_prefix + "*")] == []


def sentinels(settings: Settings) -> list[dict[str, Any]]:
    """One fresh session on every partition: once all are applied, every partition is past what was sent before."""
    found: dict[int, str] = {}
    n = 0
    while len(found) < settings.turn_partitions:
        sid = f"sentinel-{n}"
        found.setdefault(partition_of(f"{TENANT}:{sid}", settings.turn_partitions), sid)
        n += 1
    return [
        {
            "turn_id": f"{sid}-0",
            "session_id": sid,
            "tenant": TENANT,
            "seq": 0,
            "message": {"role": "user", "content": "Hello there, a question about trains."},
        }
        for sid in found.values()
    ]


async def test_forget_a_user_and_a_session_then_replay(settings: Settings) -> None:
    settings = settings.model_copy(update={"turn_partitions": 4})
    maya = conversation("s-a", "maya", 0) + conversation("s-b", "maya", 10)
    anon = conversation("s-x", None, 20)
    olga = conversation("s-c", "olga", 30)
    prefix = settings.topic_prefix
    await ensure_topics(settings)
    with running_worker(settings) as worker:
        async with TurnProducer(settings) as producer, ContextClient.from_settings(settings) as client:
            for turn in maya + anon + olga:
                await producer.send(turn)
            await producer.flush()
            await wait_for_versions(client, {sid: 6 for sid in ("s-a", "s-b", "s-x", "s-c")}, worker, tenant=TENANT)
            await client.build_prompt("s-a", "Which locker is mine?", tenant=TENANT, user_id="maya")  # a recall list
            before = await redis_keys(client, prefix)
            assert any("{acme:maya}" in key for key in before) and any("{acme:s-x}" in key for key in before)

            dry = forget(settings, "--user", "maya", "--tenant", TENANT, "--dry-run")
            assert dry.returncode == 0, dry.stderr
            assert "user acme:maya: would remove" in dry.stdout and "contexts: 2" in dry.stdout
            assert await redis_keys(client, prefix) == before

            erased = forget(settings, "--user", "maya", "--tenant", TENANT)
            assert erased.returncode == 0, erased.stderr
            for line in ("contexts: 2", "profiles: 1", "recall lists: 1", "sessions (Table rows): 2"):
                assert line in erased.stdout, erased.stdout
            assert "memories: 0" not in erased.stdout and "archived turns: 0" not in erased.stdout
            session = forget(settings, "--session", "s-x", "--tenant", TENANT)
            assert session.returncode == 0, session.stderr
            assert "session acme:s-x: removed" in session.stdout and "contexts: 1" in session.stdout

            markers = {f"{prefix}:forgot:{{acme:{sid}}}" for sid in ("s-a", "s-b", "s-x")}

            def leftovers(keys: set[str]) -> set[str]:
                erased_tags = ("{acme:maya}", "acme:s-a", "acme:s-b", "acme:s-x")
                return {key for key in keys - markers if any(tag in key for tag in erased_tags)}

            after = await redis_keys(client, prefix)
            assert markers <= after
            assert leftovers(after) == set()
            assert {key for key in before if "{acme:olga}" in key} <= after  # nobody else's data went

            # one session of a user: its context, archived turns and memories go, the user's profile stays
            one = forget(settings, "--session", "s-c", "--tenant", TENANT)
            assert one.returncode == 0, one.stderr
            assert "contexts: 1" in one.stdout and "archived turns: 6" in one.stdout, one.stdout
            await assert_session_gone(client, "acme:olga", "acme:s-c")
            assert (await client.memory.profile("acme:olga"))[0]

            # a replay of every erased turn, and a late turn of an erased session
            for turn in maya + anon + olga:
                await producer.send(turn)
            await producer.send(
                {
                    **maya[0],
                    "turn_id": "s-a-late",
                    "seq": 99,
                    "message": {"role": "user", "content": "My bike 9 number is 63"},
                }
            )
            for turn in sentinels(settings):
                await producer.send(turn)
            await producer.flush()
            await wait_for_versions(client, {t["session_id"]: 1 for t in sentinels(settings)}, worker, tenant=TENANT)
            assert leftovers(await redis_keys(client, prefix)) == set()
            await assert_session_gone(client, "acme:olga", "acme:s-c")
        log = worker.log()
    rows = {}
    for key, _, value in await changelog(settings):
        rows[key] = value
    for sid in ("s-a", "s-b", "s-x", "s-c"):
        assert orjson.loads(rows[f"{TENANT}:{sid}"]).keys() == {"forgotten_at"}  # the Table row is the marker
    assert "Traceback" not in log
