"""The TypeScript client's own tests (clients/typescript/test, Node's test runner) against the module's live
`turnstream serve`, worker, Apache Kafka and Redis; every request and reply checked with ajv against the served
OpenAPI document. `make test` builds the package first (`make ts-client`); without node_modules this test runs
`npm ci` itself. A missing `node` or `npm` fails the test, it does not skip it."""

from __future__ import annotations

import asyncio
import os
import subprocess

from tests.integration.serve.conftest import ACME_TOKEN, GLOBEX_TOKEN, Live
from tests.support.programs import tool
from tests.support.typescript import PACKAGE, built_client


async def test_the_typescript_client_passes_its_tests_on_the_live_api(live: Live) -> None:
    node = tool("node", "the TypeScript client's tests need Node 20 or newer")
    built_client()
    env = {
        **os.environ,
        "TURNSTREAM_API_URL": live.served.url,
        "TURNSTREAM_API_TOKEN": ACME_TOKEN,
        "TURNSTREAM_OTHER_TOKEN": GLOBEX_TOKEN,
    }
    done = await asyncio.to_thread(
        subprocess.run,
        [node, "--test", "--test-reporter=tap", "dist/test/"],
        cwd=PACKAGE,
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert done.returncode == 0, (
        f"node --test failed ({done.returncode}):\n{done.stdout[-6000:]}\n{done.stderr[-2000:]}"
    )
    assert "# fail 0" in done.stdout and "# pass 0" not in done.stdout
