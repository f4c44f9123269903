"""The inspector's HTTP side on a real Redis: the token, the Host check, the headers, bad requests."""

from __future__ import annotations

import base64
import contextlib
from collections.abc import AsyncIterator

import pytest
from aiohttp.test_utils import TestClient, TestServer

from tests.integration.client.fixtures import make_doc
from turnstream.inspector.app import build_app
from turnstream.redis.connect import redis_client
from turnstream.redis.inspection import InspectReader
from turnstream.redis.writer import ContextWriter
from turnstream.settings import Settings


@pytest.fixture
async def stored(redis_settings: Settings) -> Settings:
    """Two sessions of one tenant, one owned by user maya, one by itself."""
    store = ContextWriter.from_settings(redis_settings)
    await store.write(
        make_doc(4, "s1", messages=[{"role": "user", "content": "<script>x</script> hello"}]), owner="acme:maya"
    )
    await store.write(make_doc(2, "s2"))
    await store.redis.hset(
        f"{redis_settings.topic_prefix}:ctx:{{:old}}:old", "doc", b'{"session_id": "old"}'
    )  # not a ContextDoc
    await store.aclose()
    return redis_settings


@contextlib.asynccontextmanager
async def served(settings: Settings, token: str | None) -> AsyncIterator[TestClient]:
    """The inspector app on a loopback test server, on the test's Redis."""
    reader = InspectReader(redis_client(settings), settings)
    web = TestClient(TestServer(build_app(reader, token), host="127.0.0.1"))
    await web.start_server()
    try:
        yield web
    finally:
        await web.close()
        await reader.aclose()


async def test_pages_read_what_the_worker_wrote_with_headers_that_forbid_scripts(stored: Settings) -> None:
    async with served(stored, None) as web:
        listing = await web.get("/", params={"q": "MAYA"})
        text = await listing.text()
        assert listing.status == 200 and "/sessions/acme%3As1" in text and "acme%3As2" not in text
        everything = await (await web.get("/")).text()
        assert "acme%3As2" in everything and "1 stored document(s) do not validate" in everything
        broken = await web.get("/sessions/old")
        assert broken.status == 500 and "does not validate as this version&#x27;s ContextDoc" in await broken.text()
        assert listing.headers["Content-Security-Policy"].startswith("default-src 'none'")  # no script may run
        page = await web.get("/sessions/acme:s1")
        body = await page.text()
        assert page.status == 200 and "&lt;script&gt;x&lt;/script&gt; hello" in body and "<script>" not in body
        assert "user <b>maya</b> (owner key acme:maya)" in body
        assert (await web.get("/sessions/acme:nope")).status == 404
        assert (await web.get("/sessions/bad%20key")).status == 404
        assert (await web.get("/sessions/acme:s1", params={"q": "x" * 2001})).status == 400
        assert (await web.get("/nowhere")).status == 404


async def test_without_a_token_only_loopback_host_names_are_answered(stored: Settings) -> None:
    async with served(stored, None) as web:
        rebound = await web.get("/", headers={"Host": "attacker.example:8765"})
        assert rebound.status == 403 and "acme" not in await rebound.text()
        assert (await web.get("/", headers={"Host": "localhost:8765"})).status == 200


async def test_with_a_token_every_request_must_carry_it(stored: Settings) -> None:
    async with served(stored, "s3cret") as web:
        for path in ("/", "/sessions/acme:s1", "/nowhere"):
            refused = await web.get(path)
            assert refused.status == 401 and refused.headers["WWW-Authenticate"].startswith("Basic")
            assert "acme" not in await refused.text()
        assert (await web.get("/", headers={"Authorization": "Bearer wrong"})).status == 401
        assert (await web.get("/sessions/acme:s1", headers={"Authorization": "Bearer s3cret"})).status == 200
        basic = base64.b64encode(b"me:s3cret").decode()
        assert (
            await web.get("/", headers={"Authorization": f"Basic {basic}", "Host": "inspect.internal"})
        ).status == 200
