"""The worker's producers are idempotent where the broker issues producer ids: "auto" resolves to "on" against
Apache Kafka and to "off" against the embedded Tansu, and the Faust producer the worker's app starts gets a
producer id from the broker when it is "on"."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from tests.support.services import on_each_broker
from turnstream.kafka import idempotence
from turnstream.kafka.admin import ensure_topics
from turnstream.kafka.app import faust_app
from turnstream.settings import Settings


@on_each_broker
async def test_auto_resolves_to_what_the_broker_allows_and_warns_once(
    settings: Settings, broker: str, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(idempotence, "_warned", set())  # as in a new process
    with caplog.at_level(logging.DEBUG, logger=idempotence.__name__):
        first, again = await idempotence.resolved(settings), await idempotence.resolved(settings)
    expected = "on" if broker == "kafka" else "off"
    assert first.idempotent_producer == again.idempotent_producer == expected
    levels = [r.levelno for r in caplog.records if "producer ids" in r.getMessage()]
    assert levels == ([] if broker == "kafka" else [logging.WARNING, logging.DEBUG])
    for setting in ("on", "off"):  # as set: the broker is not asked
        assert (
            await idempotence.resolved(settings.model_copy(update={"idempotent_producer": setting}))
        ).idempotent_producer == setting


@on_each_broker
async def test_the_worker_apps_producer_gets_a_producer_id_where_the_broker_issues_them(
    settings: Settings, broker: str, tmp_path: Path
) -> None:
    settings = await idempotence.resolved(settings.model_copy(update={"data_dir": str(tmp_path)}))
    await ensure_topics(settings)
    app = faust_app(settings, "idempotence")
    producer = app.producer
    await producer.start()
    try:
        sent = await producer.send_and_wait(settings.memory_topic, b"owner", b"record", 0, None, None)
        assert sent.offset >= 0
        client = producer._producer  # the aiokafka producer Faust made
        assert client is not None
        manager = client._txn_manager  # aiokafka keeps the producer id here, and only when idempotent
        if broker == "kafka":
            assert manager is not None and manager.producer_id >= 0
        else:
            assert manager is None
    finally:
        await producer.stop()
