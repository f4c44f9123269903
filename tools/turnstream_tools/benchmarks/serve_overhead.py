"""What `turnstream serve` adds per request: the HTTP API against the Python SDK doing the same work, side by side.

Run against a running worker: `TURNSTREAM_KAFKA_URL=... TURNSTREAM_REDIS_URL=... python -m turnstream_tools.benchmarks.serve_overhead`
(the same TURNSTREAM_TOPIC_PREFIX as the worker). It starts `turnstream serve --open` on a free loopback port
(stopped by its process id at the end), then measures, one request at a time over a kept-alive connection:

- build_prompt: `ContextClient.build_prompt` against `POST /v1/sessions/{id}/prompt`, the same sessions, users and
  questions, nothing recorded (`record=False`);
- record: `GatewayClient.record` (produce, broker ack, then the context includes the turn) against
  `POST /v1/sessions/{id}/turns`, each a fresh turn of one of a few sessions.

Rounds go A B, B A, ... so drift hits both sides alike. Prints p50 and p99 of each side in ms, the overhead
(serve minus SDK) in ms and the ratio serve / SDK; the goal is an overhead of at most 2 ms at p50 on loopback.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from typing import Any

import aiohttp

from turnstream.client import GatewayClient
from turnstream.settings import Settings
from turnstream.stack.processes import settings_env
from turnstream_tools.benchmarks.figures import abba, p50_p99, rounded

SESSIONS = 8
QUESTIONS = ("What is my budget?", "Which city did I pick?", "When do I travel?", "Who comes with me?")


def turn(run: str, number: int) -> dict[str, Any]:
    session = number % SESSIONS
    return {
        "turn_id": f"{run}-{number}",
        "session_id": f"so-{run}-{session}",
        "user_id": f"so-u-{run}-{session}",
        "message": {"role": "user", "content": f"turn {number}: my budget is {1000 + number} EUR for Lisbon in May"},
    }


def start_serve(settings: Settings) -> tuple[subprocess.Popen[str], str]:
    env = {**os.environ, **settings_env(settings)}
    process = subprocess.Popen(
        [sys.executable, "-m", "turnstream", "serve", "--open", "--port", "0"],
        env=env,
        stdout=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
    )
    assert process.stdout is not None
    line = process.stdout.readline()
    if not line.startswith("SERVE_URL="):
        process.terminate()
        raise SystemExit(f"turnstream serve did not start: {line!r}")
    return process, line.strip().removeprefix("SERVE_URL=").rstrip("/")


async def timed(call: Callable[[], Awaitable[object]], count: int) -> list[float]:
    samples = []
    for _ in range(count):
        started = time.perf_counter()
        await call()
        samples.append(time.perf_counter() - started)
    return samples


async def measure(settings: Settings, url: str, rounds: int, per_round: int) -> dict[str, dict[str, list[float]]]:
    run = f"{os.getpid()}-{int(time.time())}"
    times: dict[str, dict[str, list[float]]] = {
        "build_prompt": {"sdk": [], "serve": []},
        "record": {"sdk": [], "serve": []},
    }
    numbers = iter(range(10**9))
    async with GatewayClient(settings) as sdk, aiohttp.ClientSession() as http:

        async def until_ready() -> None:
            for _ in range(300):
                async with http.get(f"{url}/readyz") as reply:
                    if reply.status == 200:
                        return
                await asyncio.sleep(0.1)
            raise SystemExit("turnstream serve never became ready")

        await until_ready()
        for number in range(SESSIONS):  # every session and user exists before the first timed call
            await sdk.record(turn(run, number), timeout=120)

        async def post(path: str, body: dict[str, Any]) -> None:
            async with http.post(f"{url}{path}", json=body) as reply:
                assert reply.status == 200, await reply.text()
                await reply.read()

        def prompt_sdk() -> Awaitable[object]:
            n = next(numbers)
            return sdk.context.build_prompt(
                f"so-{run}-{n % SESSIONS}", QUESTIONS[n % 4], user_id=f"so-u-{run}-{n % SESSIONS}", record=False
            )

        def prompt_serve() -> Awaitable[object]:
            n = next(numbers)
            return post(
                f"/v1/sessions/so-{run}-{n % SESSIONS}/prompt",
                {"text": QUESTIONS[n % 4], "user_id": f"so-u-{run}-{n % SESSIONS}", "record": False},
            )

        def record_sdk() -> Awaitable[object]:
            return sdk.record(turn(run, SESSIONS + next(numbers)))

        def record_serve() -> Awaitable[object]:
            value = turn(run, SESSIONS + next(numbers))
            return post(f"/v1/sessions/{value['session_id']}/turns", {"turns": [value]})

        sides = {"build_prompt": (prompt_sdk, prompt_serve), "record": (record_sdk, record_serve)}
        for name, (sdk_call, serve_call) in sides.items():
            await timed(sdk_call, 20)  # warm both paths (script load, connections, tokenizer)
            await timed(serve_call, 20)
            for _, sdk_first in abba(rounds):
                for side in ("sdk", "serve") if sdk_first else ("serve", "sdk"):
                    call = sdk_call if side == "sdk" else serve_call
                    times[name][side] += await timed(call, per_round if name == "build_prompt" else per_round // 4)
    return times


def report(times: dict[str, dict[str, list[float]]]) -> None:
    print(f"{'call':<13} {'side':<6} {'n':>5} {'p50 ms':>8} {'p99 ms':>8}")
    for name, sides in times.items():
        quantiles = {side: [1000 * q for q in p50_p99(samples)] for side, samples in sides.items()}
        for side, (p50, p99) in quantiles.items():
            print(f"{name:<13} {side:<6} {len(sides[side]):>5} {rounded(p50):>8} {rounded(p99):>8}")
        (sdk50, sdk99), (serve50, serve99) = quantiles["sdk"], quantiles["serve"]
        print(
            f"{name:<13} overhead p50 {rounded(serve50 - sdk50)} ms (x{rounded(serve50 / sdk50)}), "
            f"p99 {rounded(serve99 - sdk99)} ms (x{rounded(serve99 / sdk99)})"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=6, help="A B rounds per call (default 6)")
    parser.add_argument(
        "--per-round", type=int, default=400, help="prompts per side and round; records a quarter (default 400)"
    )
    args = parser.parse_args()
    settings = Settings()
    process, url = start_serve(settings)
    try:
        report(asyncio.run(measure(settings, url, args.rounds, args.per_round)))
    finally:
        process.terminate()
        process.wait(20)


if __name__ == "__main__":
    main()
