"""`turnstream mcp` driven by the official mcp SDK's own client over stdio and streamable HTTP, on a live worker,
Apache Kafka and Redis: the tools' prompt and search are the SDK's, a note survives Redis losing everything, a
token reaches its own tenant only, and SIGTERM stops either transport with status 0."""

from __future__ import annotations

import asyncio
import os
import re
import select
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, TextIO

import httpx2
import orjson
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

from tests.integration.serve.conftest import ACME_TOKEN, GLOBEX_TOKEN, Live, turn
from turnstream.redis.connect import redis_client
from turnstream.redis.keys import KeyLayout
from turnstream.redis.memory_store import MemoryStore
from turnstream.stack.processes import settings_env
from turnstream.stack.services import die_with_parent

TURNS = "/v1/sessions/{session_id}/turns"
INITIALIZE = orjson.dumps(
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "0"}},
    }
)
MCP_DOC = (Path(__file__).parents[3] / "docs" / "mcp.md").read_text(encoding="utf-8")
TOOLS = {"get_prompt", "search_memory", "remember", "erase_memory"}


def env_of(live: Live, **extra: str) -> dict[str, str]:
    return {**os.environ, **settings_env(live.settings), **extra}


@asynccontextmanager
async def over_stdio(live: Live, tenant: str, errlog: TextIO = sys.stderr) -> AsyncIterator[ClientSession]:
    """A client of a `turnstream mcp` it starts, whose stderr (the server's log) goes to `errlog`."""
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "turnstream", "mcp", "--tenant", tenant], env=env_of(live)
    )
    async with stdio_client(params, errlog) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        yield session


def started_http(live: Live) -> tuple[subprocess.Popen[str], str]:
    process = subprocess.Popen(
        [sys.executable, "-m", "turnstream", "mcp", "--http", "--port", "0"],
        env=env_of(live, TURNSTREAM_SERVE_TOKENS_FILE=str(live.tokens_file)),
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        preexec_fn=die_with_parent,
    )
    assert process.stdout is not None
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if select.select([process.stdout], [], [], 0.2)[0]:
            line = process.stdout.readline()
            if line.startswith("MCP_URL="):
                return process, line.strip().removeprefix("MCP_URL=")
        assert process.poll() is None, process.stderr.read() if process.stderr else ""
    raise AssertionError("turnstream mcp --http printed no MCP_URL")


@asynccontextmanager
async def over_http(url: str, token: str) -> AsyncIterator[ClientSession]:
    async with (
        httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=60) as http,
        streamable_http_client(url, http_client=http) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        yield session


def error_text(result: Any) -> str:
    """The text of a tool error, which the model reads."""
    assert result.is_error, result
    return " ".join(block.text for block in result.content)


async def call(session: ClientSession, tool: str, **arguments: Any) -> Any:
    result = await session.call_tool(tool, arguments)
    assert not result.is_error, result.content  # type: ignore[union-attr]
    return result.structured_content  # type: ignore[union-attr]


def resyncs(live: Live) -> str:
    """What the worker logged of its re-syncs and failures, for a failed wait's message."""
    lines = live.worker.log().splitlines()
    return "\n".join(line for line in lines if re.search(r"re-sync|replay|journal|ERROR|WARNING", line))[-4000:]


async def wait_for_key(redis: Any, key: str, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while not await redis.exists(key):
        assert time.monotonic() < deadline, f"{key} was never set"
        await asyncio.sleep(0.2)


async def memory_texts(mcp: ClientSession, user: str) -> list[str]:
    return [m["text"] for m in (await call(mcp, "search_memory", query="ryokan hotels", user_id=user))["memories"]]


async def stored_texts(live: Live, user: str) -> list[str]:
    """The owner's memories as Redis holds them, whatever a search finds: for a failed wait's message."""
    store = MemoryStore.from_settings(live.settings)
    try:
        return [memory.text for memory in await store.list(user)]
    finally:
        await store.aclose()


async def recorded(live: Live, text: str) -> tuple[str, str]:
    tag = uuid.uuid4().hex[:8]
    session, user = f"mcp-s-{tag}", f"mcp-u-{tag}"
    status, _, _ = await live.acme.call(
        "POST", TURNS, {"session_id": session}, {"turns": [turn(session, "t1", text, user)], "timeout_seconds": 30}
    )
    assert status == 200
    return session, user


async def test_over_stdio_the_tools_give_the_prompt_and_search_and_a_note_survives_redis_losing_everything(
    live: Live,
) -> None:
    session, user = await recorded(live, "Hello! I am planning a trip to Kyoto in April with my sister.")
    async with over_stdio(live, "acme") as mcp:
        listed = {tool.name: tool for tool in (await mcp.list_tools()).tools}
        assert set(listed) == TOOLS and all(len(tool.description or "") > 150 for tool in listed.values())
        assert listed["search_memory"].annotations.read_only_hint is True  # type: ignore[union-attr]
        assert listed["erase_memory"].annotations.destructive_hint is True  # type: ignore[union-attr]

        prompt = await call(mcp, "get_prompt", session_id=session, question="Where am I going?", user_id=user)
        assert prompt["messages"][-1] == {"role": "user", "content": "Where am I going?"}
        assert "Kyoto" in str(prompt["messages"])
        found = await call(mcp, "search_memory", query="Kyoto trip April sister", user_id=user)
        assert any("Kyoto" in line and line.startswith("[") for line in found["turns"])  # dated lines

        note = await call(mcp, "remember", text="Prefers  ryokan stays over hotels.", type="preference", user_id=user)
        assert note["type"] == "preference" and note["text"] == "Prefers ryokan stays over hotels."
        again = await call(mcp, "remember", text="prefers ryokan stays over hotels.", type="preference", user_id=user)
        assert again["id"] == note["id"]  # the same note is one memory, in its latest words
        note = again
        assert note["text"] in await memory_texts(mcp, user)

        redis = redis_client(live.settings)  # Redis loses everything of this deployment, the replay marker included
        replayed = KeyLayout(live.settings.topic_prefix).journal_replayed()
        try:
            # The worker's start-up replay may still be under way: one that marked itself done between the scan and
            # the delete would keep its marker and lose what it wrote, and no replay would follow.
            await wait_for_key(redis, replayed)
            keys = [key async for key in redis.scan_iter(f"{live.settings.topic_prefix}:*")]
            async with redis.pipeline(transaction=False) as pipe:
                for key in keys:
                    pipe.ttl(key)
                ttls = await pipe.execute()
            # a key with a TTL (a lock, a short-lived marker) may expire between the scan and the delete
            persistent = sum(ttl == -1 for ttl in ttls)
            assert persistent and await redis.delete(*keys, replayed) >= persistent
        finally:
            await redis.aclose()
        deadline = time.monotonic() + 120  # the re-sync checks every second; a loaded machine slows its replay
        while note["text"] not in (found := await memory_texts(mcp, user)):
            assert time.monotonic() < deadline, (
                f"the note did not come back from the memory journal; search found {found}, the owner's memories "
                f"are {await stored_texts(live, user)}:\n{resyncs(live)}"
            )
            await asyncio.sleep(0.5)


async def test_an_expected_failure_reaches_the_model_with_its_words_and_logs_no_traceback(
    live: Live, tmp_path: Path
) -> None:
    session, user = await recorded(live, "I prefer aisle seats on long flights.")
    with (tmp_path / "stderr").open("w+") as log:
        async with over_stdio(live, "acme", log) as mcp:
            unknown = await mcp.call_tool("erase_memory", {"user_id": f"never-{user}"})
            assert "no such session or user" in error_text(unknown)
            assert (await call(mcp, "erase_memory", session_id=session, dry_run=True))["counts"]["contexts"] == 1
            no_owner = await mcp.call_tool("search_memory", {"query": "aisle seats"})
            assert "give user_id or session_id" in error_text(no_owner)
            both = await mcp.call_tool("erase_memory", {"user_id": user, "session_id": session})
            assert "exactly one" in error_text(both)
            small = await mcp.call_tool("get_prompt", {"session_id": session, "question": "x", "budget_tokens": 8})
            assert "budget_tokens: at least 64" in error_text(small)
            empty = await mcp.call_tool("remember", {"text": "   ", "user_id": user})
            assert "text: 1 to 2000 characters" in error_text(empty)
        log.seek(0)
        logged = log.read()
    assert "Traceback" not in logged, logged


async def test_over_http_each_token_reaches_its_own_tenant_and_erasure_removes_what_the_tools_showed(
    live: Live,
) -> None:
    session, user = await recorded(live, "My locker code is 4471, please keep it in mind.")
    process, url = started_http(live)
    try:
        async with over_http(url, ACME_TOKEN) as acme, over_http(url, GLOBEX_TOKEN) as globex:
            await call(acme, "remember", text="Maya's locker code is 4471.", user_id=user)
            assert "4471" in str(await call(acme, "search_memory", query="locker code 4471", user_id=user))
            assert await call(globex, "search_memory", query="locker code 4471", user_id=user) == {
                "memories": [],
                "turns": [],
            }
            theirs = await globex.call_tool("erase_memory", {"user_id": user})
            unknown = await globex.call_tool("erase_memory", {"user_id": f"never-{user}"})
            assert "no such session or user" in error_text(theirs)
            assert theirs.content == unknown.content  # type: ignore[union-attr]
            assert "4471" not in str(
                await call(globex, "get_prompt", session_id=session, question="locker code?", user_id=user)
            )

            erased = await call(acme, "erase_memory", user_id=user)
            assert erased["erased"] == f"user acme:{user}" and erased["counts"]["memories"] >= 1
            assert await call(acme, "search_memory", query="locker code 4471", user_id=user) == {
                "memories": [],
                "turns": [],
            }
        async with httpx2.AsyncClient() as http:
            refused = await http.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
        assert refused.status_code == 401 and refused.json()["error"] == "unauthorized"
        await the_docs_client_works(url)
    finally:
        process.send_signal(signal.SIGTERM)
        assert process.wait(20) == 0
    assert process.stderr is not None and "Traceback" not in process.stderr.read()  # a refusal is no crash


async def the_docs_client_works(url: str) -> None:
    """docs/mcp.md's `MCP_URL=` line is the one printed, and its client, given this server's URL and token, runs."""
    (shown,) = re.findall(r"^MCP_URL=.*$", MCP_DOC, re.M)
    pattern = r"MCP_URL=http://127\.0\.0\.1:\d+/mcp"
    assert re.fullmatch(pattern, shown) and re.fullmatch(pattern, f"MCP_URL={url}")
    (client,) = re.findall(r"```python\n(.*?)```", MCP_DOC, re.S)
    client = client.replace("http://127.0.0.1:8781/mcp", url).replace("acme-3f9c0d1e8b7a6c5d", ACME_TOKEN)
    done = await asyncio.to_thread(
        subprocess.run, [sys.executable, "-c", client], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0 and done.stdout.startswith("False {"), done.stderr[-3000:]


async def test_sigterm_stops_the_stdio_server_with_status_0(live: Live) -> None:
    process = subprocess.Popen(
        [sys.executable, "-m", "turnstream", "mcp", "--tenant", "acme"],
        env=env_of(live),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        preexec_fn=die_with_parent,
    )
    assert process.stdin is not None and process.stdout is not None
    try:
        # an answer to `initialize` means it is serving: its stop handlers are in place (a fixed sleep is not enough
        # on a busy machine, where the import alone can take seconds)
        process.stdin.write(INITIALIZE + b"\n")
        process.stdin.flush()
        ready, _, _ = select.select([process.stdout], [], [], 60)
        assert ready and b'"id":1' in process.stdout.readline(), process.stderr.read() if process.stderr else b""
        process.send_signal(signal.SIGTERM)
        assert process.wait(15) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
