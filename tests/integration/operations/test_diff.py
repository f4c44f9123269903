"""`turnstream diff NAME` on a real broker, Redis and workers: the live prefix against a stand-in shadow, a second
worker under prefix NAME fed the same turns. The same settings give no difference at all; a smaller budget gives
smaller prompts; the JSON says what the table says; a labelled question is scored on both sides as the recall bench
scores it; a bad NAME fails in one line."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable, Callable
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
import pytest
from aiohttp.test_utils import TestClient, TestServer

from tests.support.conversations import turns_for
from tests.support.pipeline import interleave, produce, wait_for_versions
from tests.support.worker import running_worker
from turnstream.cli import main
from turnstream.client import ContextClient
from turnstream.inspector.app import build_app
from turnstream.kafka.admin import ensure_topics
from turnstream.redis.connect import redis_client
from turnstream.redis.inspection import InspectReader
from turnstream.settings import Settings
from turnstream.stack.processes import settings_env
from turnstream_tools.benchmarks.recall import prompt_holds

pytestmark = pytest.mark.integration


@dataclass(frozen=True)
class Ran:
    code: int
    out: str
    err: str


@pytest.fixture
def diff(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Callable[..., Awaitable[Ran]]:
    """`turnstream diff` through the command's entry point in this process, with the live side's settings."""

    async def run(settings: Settings, *args: str) -> Ran:
        for name, value in settings_env(settings).items():
            monkeypatch.setenv(name, value)
        monkeypatch.setenv("COLUMNS", "200")  # rich's width: the table's rows on one line each
        code = await asyncio.to_thread(main, ["diff", *args])  # the command runs its own event loop
        out, err = capsys.readouterr()
        return Ran(code, out, err)

    return run


def summary_row(out: str, label: str) -> list[str]:
    """The cells after `label` in the terminal's summary table."""
    line = next(line for line in out.splitlines() if label in line)
    return [cell.strip() for cell in line.split("│")[2:-1]]


async def test_diff_reports_what_differs_between_two_prefixes_and_nothing_where_nothing_does(
    settings: Settings, diff: Callable[..., Awaitable[Ran]], tmp_path: Path
) -> None:
    live = settings.model_copy(update={"budget_tokens": 900, "turn_partitions": 2})
    same = live.model_copy(update={"topic_prefix": live.topic_prefix + "-same"})
    small = live.model_copy(update={"topic_prefix": live.topic_prefix + "-small", "budget_tokens": 300})
    sessions = {sid: turns_for(sid, seed=40 + n, count=36) for n, sid in enumerate(("d0", "d1", "d2"))}
    turns = interleave(list(sessions.values()))
    with ExitStack() as stack:
        workers = {}
        for side in (live, same, small):
            await ensure_topics(side)
            workers[side.topic_prefix] = stack.enter_context(running_worker(side, side.topic_prefix))
        for side in (live, same, small):  # the same turns to each prefix's turns topic, as a shadow reads them
            await produce(side, turns)
        for side in (live, same, small):
            async with ContextClient.from_settings(side) as client:
                await wait_for_versions(
                    client, {sid: len(t) for sid, t in sessions.items()}, workers[side.topic_prefix]
                )

    # identical settings: the prompts are the same, byte for byte
    ran = await diff(live, same.topic_prefix, "--all", "--questions", "2", "--json")
    assert ran.code == 0, ran.err
    report = orjson.loads(ran.out)
    questions = {s["session"]: [q["turn_id"] for q in s["questions"]] for s in report["sessions"]}
    users = {sid: [t["turn_id"] for t in ts if t["message"]["role"] == "user"][-2:] for sid, ts in sessions.items()}
    assert questions == users  # the users' own last turns, from the log
    assert report["summary"]["sessions"] == 3 and report["summary"]["questions"] == sum(map(len, users.values()))
    assert report["summary"]["sessions_identical"] == 3
    assert all(q["identical"] and q["text_diff"] == [] for s in report["sessions"] for q in s["questions"])

    # a smaller context budget: other contexts, so other prompts (what recall brings back grows as the context shrinks)
    ran = await diff(live, small.topic_prefix, "--all", "--json")
    assert ran.code == 0, ran.err
    summary = orjson.loads(ran.out)["summary"]
    assert summary["sessions_identical"] == 0
    assert summary["recalled_gained"] + summary["recalled_lost"] + summary["facts_changed"] > 0

    # and read within a smaller prompt budget: smaller prompts; the JSON says what the table says
    smaller = ("--sessions", "2", "--session", "d2", "--shadow-set", "prompt_budget_tokens=1000")
    ran, table = (
        await diff(live, small.topic_prefix, *smaller, "--json"),
        await diff(live, small.topic_prefix, *smaller),
    )
    assert ran.code == table.code == 0, ran.err + table.err
    report = orjson.loads(ran.out)
    summary = report["summary"]
    compared = [s["session"] for s in report["sessions"]]
    assert "d2" in compared and summary["sessions"] == len(compared) >= 2  # the sample of two, and d2 besides
    assert summary["tokens_mean"]["shadow"] < summary["tokens_mean"]["live"]
    for session in report["sessions"]:
        for asked in session["questions"]:
            assert asked["tokens"]["shadow"] <= 1000 < asked["tokens"]["live"], session["session"]
            assert not asked["identical"] and asked["text_diff"][1] == f"+++ {small.topic_prefix}"
    assert summary_row(table.out, "sessions compared") == [str(summary["sessions"]), ""]
    assert summary_row(table.out, "prompt tokens, mean") == [
        f"{summary['tokens_mean'][k]:.1f}" for k in ("live", "shadow")
    ]
    assert summary_row(table.out, "prompt tokens, p50") == [
        f"{summary['tokens_p50'][k]:.1f}" for k in ("live", "shadow")
    ]
    assert summary_row(table.out, "recalled turns gained / lost") == [
        f"{summary['recalled_gained']} / {summary['recalled_lost']}",
        "",
    ]
    assert summary_row(table.out, "facts added, removed or changed") == [str(summary["facts_changed"]), ""]
    assert summary_row(table.out, "memories added, removed or changed") == [str(summary["memories_changed"]), ""]
    assert summary_row(table.out, "sessions identical") == [str(summary["sessions_identical"]), ""]

    # labelled questions: each side's prompt scored as the recall bench scores it, question by question
    early: list[dict[str, Any]] = [t for t in sessions["d0"][:12] if t["message"]["role"] == "tool"]
    words = re.findall(r"[A-Za-z]{5,}", " ".join(str(t["message"]["content"]) for t in early))[:3]
    asked = [{"question": f"what about {word}?", "answer": word} for word in words]
    labels = tmp_path / "labels.json"
    labels.write_bytes(orjson.dumps([{"session_id": "d0", "user_id": "user-40", "qa": asked}]))
    ran = await diff(live, small.topic_prefix, "--labels", str(labels), "--json")
    assert ran.code == 0, ran.err
    scored = orjson.loads(ran.out)
    held = []
    for side in (live, small):
        async with ContextClient.from_settings(side) as client:
            prompts = [await client.build_prompt("d0", q["question"], user_id="user-40", record=False) for q in asked]
        held.append([prompt_holds(q["answer"], p.messages) for q, p in zip(asked, prompts)])
    answered = [q["answered"] for q in scored["sessions"][0]["questions"]]
    assert answered == [{"live": a, "shadow": b} for a, b in zip(*held)]
    assert scored["summary"]["labelled"] == len(asked)
    assert scored["summary"]["answered"] == {"live": sum(held[0]), "shadow": sum(held[1])}

    await assert_the_inspector_shows_the_diff(live, small.topic_prefix, report["summary"])

    # a bad NAME: one line, non-zero
    for name, code, said in (
        (live.topic_prefix, 2, "is the live prefix"),
        (live.topic_prefix + "-none", 1, "no contexts under prefix"),
        ("bad name!", 2, "TURNSTREAM_TOPIC_PREFIX"),
    ):
        ran = await diff(live, name)
        assert ran.code == code and ran.out == "", ran
        assert len(ran.err.strip().splitlines()) == 1 and said in ran.err, ran.err


async def assert_the_inspector_shows_the_diff(live: Settings, shadow: str, cli: dict[str, Any]) -> None:
    """The inspector's /diff/NAME page: the summary `turnstream diff` prints (over its own sample), each session's
    diff; a name that is the live prefix or no key prefix at all is refused."""
    reader = InspectReader(redis_client(live), live)
    web = TestClient(TestServer(build_app(reader, None), host="127.0.0.1"))
    await web.start_server()
    try:
        answer = await web.get(f"/diff/{shadow}")
        page = await answer.text()
        assert answer.status == 200, page
        assert f"<h1>{live.topic_prefix} against {shadow}</h1>" in page
        assert '<tr><td>sessions compared</td><td class="num">3</td>' in page  # all three: fewer than the page samples
        assert page.count("<details><summary>text diff</summary>") == 3
        assert all(f'href="/sessions/{sid}"' in page for sid in ("d0", "d1", "d2"))
        refused = await web.get(f"/diff/{live.topic_prefix}")
        assert refused.status == 404 and "is the live prefix" in await refused.text()
        assert (await web.get("/diff/bad%20name")).status == 400
    finally:
        await web.close()
        await reader.aclose()
