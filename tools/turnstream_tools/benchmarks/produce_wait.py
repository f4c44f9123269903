"""Produce-and-wait from a gateway: SyncTurnProducer (threads) against the asyncio TurnProducer, side by side.

Run against a running worker: `TURNSTREAM_KAFKA_URL=... TURNSTREAM_REDIS_URL=... python -m turnstream_tools.benchmarks.produce_wait`
(the same TURNSTREAM_TOPIC_PREFIX as the worker). Prints, in milliseconds:

- the cost of one turn produced the old sync way, `asyncio.run` of a fresh TurnProducer per turn
  (connect, metadata, start, send, stop), against `SyncTurnProducer.send(turn).result()`;
- produce-and-wait p50/p99 (the turn sent, acknowledged, then in the context) at a paced rate through
  SyncGatewayClient.record and GatewayClient.record, in A B B A order so drift hits both alike.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from turnstream.client import GatewayClient, SyncGatewayClient, SyncTurnProducer, TurnProducer
from turnstream.settings import Settings
from turnstream_tools.benchmarks.figures import p50_p99, rounded

SESSIONS = 20
"""Sessions the paced turns rotate over: a session gets a turn every SESSIONS / rate seconds."""
THREADS = 32
"""Gateway threads of the sync run: enough that the pace never waits for a free one."""
WARM_UP_TIMEOUT = 120.0


def turn(run: str, number: int, session: int = 0) -> dict[str, Any]:
    return {
        "turn_id": f"{run}-{number}",
        "session_id": f"pw-{run}-{session}",
        "user_id": f"u-{session}",
        "message": {"role": "user", "content": f"turn {number}: my budget is {number} EUR"},
    }


async def produce_once(settings: Settings, value: dict[str, Any]) -> None:
    async with TurnProducer(settings) as producer:
        await (await producer.send(value))


def per_turn_cost(settings: Settings, run: str, old_turns: int, new_turns: int) -> dict[str, float]:
    """Median ms per turn: a TurnProducer started per turn under asyncio.run, against one SyncTurnProducer."""
    old = []
    for number in range(old_turns):
        started = time.perf_counter()
        asyncio.run(produce_once(settings, turn(f"{run}-old", number)))
        old.append(time.perf_counter() - started)
    new = []
    with SyncTurnProducer(settings) as producer:
        for number in range(new_turns):
            started = time.perf_counter()
            producer.send(turn(f"{run}-new", number)).result()
            new.append(time.perf_counter() - started)
    return {"old_ms": rounded(1000 * statistics.median(old)), "new_ms": rounded(1000 * statistics.median(new))}


def paced_sync(gateway: SyncGatewayClient, run: str, count: int, rate: float) -> list[float]:
    def one(number: int) -> float:
        started = time.perf_counter()
        gateway.record(turn(run, number, number % SESSIONS))
        return time.perf_counter() - started

    start = time.perf_counter()
    with ThreadPoolExecutor(THREADS) as pool:
        futures = []
        for number in range(count):
            time.sleep(max(0.0, start + number / rate - time.perf_counter()))
            futures.append(pool.submit(one, number))
        return [future.result() for future in futures]


async def paced_async(gateway: GatewayClient, run: str, count: int, rate: float) -> list[float]:
    async def one(number: int) -> float:
        started = time.perf_counter()
        await gateway.record(turn(run, number, number % SESSIONS))
        return time.perf_counter() - started

    start = time.perf_counter()
    tasks = []
    for number in range(count):
        await asyncio.sleep(max(0.0, start + number / rate - time.perf_counter()))
        tasks.append(asyncio.create_task(one(number)))
    return list(await asyncio.gather(*tasks))


async def async_rounds(settings: Settings, run: str, count: int, rate: float) -> list[float]:
    async with GatewayClient(settings) as gateway:
        await gateway.record(turn(f"{run}-warm", 0), timeout=WARM_UP_TIMEOUT)
        return await paced_async(gateway, run, count, rate)


def produce_and_wait(settings: Settings, run: str, count: int, rate: float) -> dict[str, dict[str, float]]:
    """p50/p99 ms of record() at `rate` turns/s, sync and async, in A B B A order."""
    times: dict[str, list[float]] = {"sync": [], "async": []}
    with SyncGatewayClient(settings) as gateway:
        gateway.record(turn(f"{run}-warm", 0), timeout=WARM_UP_TIMEOUT)
        for order, mode in enumerate(("sync", "async", "async", "sync")):
            label = f"{run}-{mode}-{order}"
            if mode == "sync":
                times[mode] += paced_sync(gateway, label, count, rate)
            else:
                times[mode] += asyncio.run(async_rounds(settings, label, count, rate))
    return {
        mode: dict(zip(("p50_ms", "p99_ms"), (rounded(1000 * q) for q in p50_p99(seconds))))
        for mode, seconds in times.items()
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rate", type=float, default=100.0, help="turns per second (default 100)")
    parser.add_argument("--turns", type=int, default=300, help="turns per round, four rounds (default 300)")
    parser.add_argument("--old-turns", type=int, default=20, help="turns produced the old way (default 20)")
    args = parser.parse_args()
    settings = Settings()
    run = f"{os.getpid()}-{int(time.time())}"
    print("per-turn produce cost:", per_turn_cost(settings, run, args.old_turns, 10 * args.old_turns))
    print(f"produce-and-wait at {args.rate:g} turns/s:", produce_and_wait(settings, run, args.turns, args.rate))


if __name__ == "__main__":
    main()
