"""The worker's Faust producer asks for idempotence when its settings say "on"; send_buffered hands Faust's
buffered records over until none is left, and gives up at its deadline."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import Any, Literal

import pytest

from turnstream.kafka.app import faust_app
from turnstream.kafka.faust_private.producer import IdempotentProducer, send_buffered
from turnstream.settings import Settings


@pytest.mark.parametrize(("setting", "asked"), [("on", True), ("off", False), ("auto", False)])
def test_the_worker_app_producer_asks_for_idempotence_only_when_the_setting_is_on(
    setting: Literal["on", "off", "auto"], asked: bool, tmp_path: Any
) -> None:
    # "auto" is resolved against the broker before the worker builds its app (kafka/idempotence.resolved)
    settings = Settings(kafka_url="kafka://127.0.0.1:9", idempotent_producer=setting, data_dir=str(tmp_path))
    producer = faust_app(settings, "unit").producer
    assert isinstance(producer, IdempotentProducer)
    assert producer._settings_extra().get("enable_idempotence", False) is asked


@dataclass
class Buffer:
    """A ProducerBuffer's surface: `size` and `flush_atmost`, here sending one record per call."""

    size: int
    stuck: bool = False
    calls: list[int] = field(default_factory=list)

    async def flush_atmost(self, n: int) -> int:
        self.calls.append(n)
        await asyncio.sleep(0.01)
        if self.stuck:
            return 0
        self.size -= 1
        return 1


@dataclass
class Producer:
    buffer: Any


def test_every_buffered_record_is_handed_over() -> None:
    buffer = Buffer(size=3)
    assert asyncio.run(send_buffered(Producer(buffer), time.monotonic() + 5)) is True
    assert buffer.size == 0 and buffer.calls == [3, 2, 1]


def test_a_buffer_that_does_not_drain_is_given_up_at_the_deadline() -> None:
    buffer = Buffer(size=2, stuck=True)
    started = time.monotonic()
    assert asyncio.run(send_buffered(Producer(buffer), started + 0.1)) is False
    assert buffer.size == 2 and 0.1 <= time.monotonic() - started < 2


def test_an_empty_buffer_is_not_touched() -> None:
    buffer = Buffer(size=0)
    assert asyncio.run(send_buffered(Producer(buffer), time.monotonic() + 5)) is True
    assert buffer.calls == []
