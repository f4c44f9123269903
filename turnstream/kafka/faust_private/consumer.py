"""Faust's aiokafka consumer, with the private hooks turnstream needs behind public names.

Relies on (faust-streaming, `faust.transport.drivers.aiokafka` and `faust.transport.consumer`):
- `Consumer._new_consumer_thread`: the only way to give the consumer a thread class of our own;
- `AIOKafkaConsumerThread._create_worker_consumer` and aiokafka's `AIOKafkaConsumer._fetch_max_wait_ms`:
  Faust hard-codes a 1,500 ms fetch wait, read when the consumer starts its fetcher;
- `Consumer._seek`, `Consumer._thread` and the thread's `call_thread` / `should_stop`: a seek made from the
  main thread has to run on the consumer's thread (see `Consumer._seek`);
- `Consumer._is_changelog_tp` (whether a partition is a Table's changelog) and `Consumer._committed_offset`
  (what the consumer committed, per partition): Faust keeps no public view of either.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, cast

from faust.transport.drivers import aiokafka as aiokafka_driver
from faust.types import TP, ConsumerT

if TYPE_CHECKING:
    from turnstream.kafka.faust_private.app import ConsumerApp


class FetchWaitThread(aiokafka_driver.AIOKafkaConsumerThread):
    """Faust's consumer thread with the fetch wait of the app (`fetch_wait_ms`; Faust hard-codes 1,500 ms).

    A broker that does not answer a waiting fetch when records arrive (the embedded one) holds every
    record that long; Apache Kafka answers as soon as records are there, whatever the wait.
    """

    def _create_worker_consumer(self, transport: aiokafka_driver.Transport) -> Any:
        consumer = super()._create_worker_consumer(transport)
        app = cast("ConsumerApp", self.app)  # the app whose transport builds this thread's consumer
        consumer._fetch_max_wait_ms = app.fetch_wait_ms  # read when the consumer starts its fetcher
        return consumer


class Consumer(aiokafka_driver.Consumer):
    """Faust's aiokafka consumer: seeks on the consumer's own thread, the app's fetch wait, changelogs told apart."""

    def is_changelog(self, tp: TP) -> bool:
        """Whether `tp` is a partition of a Table's changelog."""
        return bool(self._is_changelog_tp(tp))

    async def _seek(self, partition: TP, offset: int) -> None:
        # Faust seeks from the main thread on the consumer its own thread runs; aiokafka's fetcher then drops a
        # partition's buffer in the middle of that thread's loop over them (KeyError in fetched_records, and the
        # worker crashes). The seek is handed to the consumer's thread, as Faust's seek_wait does.
        if self._thread.should_stop:
            self._thread.seek(partition, offset)  # stopping: its queue may never run again
            return
        # mode runs a plain function there too (maybe_async), though its annotation asks for a coroutine function
        await self._thread.call_thread(self._thread.seek, partition, offset)  # type: ignore[arg-type]

    def _new_consumer_thread(self) -> FetchWaitThread:
        return FetchWaitThread(self, loop=self.loop, beacon=self.beacon)


def committed_offsets(consumer: ConsumerT) -> Mapping[TP, int]:
    """Per partition, the offset the consumer last committed for the group (Faust keeps no public view of it)."""
    committed: Mapping[TP, int] = consumer._committed_offset  # type: ignore[attr-defined]  # private: not on ConsumerT
    return committed
