"""SyncTurnProducer: TurnProducer for threaded gateways, its one aiokafka producer on an event loop of its own.

Every thread of a process sends through the same producer: a send validates in the caller's thread, hands
the record to the loop's thread, waits only until it is in aiokafka's buffer and returns a
concurrent.futures.Future that the broker's acknowledgement (or error) completes. aiokafka's errors are imported
where they are caught, so importing this module loads no Kafka client (producer.py says why).
"""

from __future__ import annotations

import asyncio
import atexit
import threading
import time
from concurrent.futures import CancelledError, Future
from functools import partial
from types import TracebackType
from typing import TYPE_CHECKING, Any

from turnstream.client.errors import ProducerBufferFull, ProducerClosedError, ProducerStartError
from turnstream.client.producer import TurnProducer, turn_record
from turnstream.connections import kafka_refusal, kafka_refusal_reason
from turnstream.schemas.headers import Headers, header_items
from turnstream.schemas.turn import Turn
from turnstream.settings import Settings
from turnstream.tracing import inject

if TYPE_CHECKING:
    from aiokafka.structs import RecordMetadata

SendHandle = Future
"""What send returns: `result(timeout)` is the broker's RecordMetadata (`partition`, `offset`) or raises its error."""
EXIT_TIMEOUT = 10.0
"""Seconds the close registered with atexit waits for the broker to acknowledge what is left."""


class SyncTurnProducer:
    """A TurnProducer that any thread may call, blocking; one per process."""

    def __init__(
        self,
        settings: Settings,
        *,
        send_timeout: float | None = None,
        max_pending: int | None = None,
        **producer_options: Any,
    ) -> None:
        """`send_timeout` and `max_pending` default to the settings' producer_send_timeout_seconds and
        producer_max_pending; `producer_options` go to AIOKafkaProducer, as for TurnProducer."""
        self.settings = settings
        self.send_timeout = send_timeout if send_timeout is not None else settings.producer_send_timeout_seconds
        self.max_pending = max_pending if max_pending is not None else settings.producer_max_pending
        self.turn_producer = TurnProducer(settings, **producer_options)
        self._room = threading.BoundedSemaphore(self.max_pending)
        self._lock = threading.Lock()  # guards starting and closing against sends from other threads
        self._loop: asyncio.AbstractEventLoop | None = None
        self._closed = False

    def start(self) -> None:
        """Connect now rather than on the first send; ProducerStartError when the broker cannot be reached."""
        with self._lock:
            self._started_loop()

    def send(self, turn: Turn | dict[str, Any], headers: Headers = None) -> SendHandle[RecordMetadata]:
        """Queue `turn` as TurnProducer.send does (TurnError here, before anything is queued).

        Blocks while the buffer is full, ProducerBufferFull after send_timeout seconds; every other error
        (a record too large, a broker refusal) comes out of the handle's result().
        """
        valid, value = turn_record(turn)
        return self.send_raw(valid.session_key.encode(), value, headers)

    def send_raw(self, key: bytes | None, value: bytes | None, headers: Headers = None) -> SendHandle[RecordMetadata]:
        """Queue a value as it is, valid or not (for tools and tests that need malformed input)."""
        deadline = time.monotonic() + self.send_timeout
        # the caller's OpenTelemetry span, taken here: the loop's thread has none
        items = inject(header_items(headers))
        if not self._room.acquire(timeout=self.send_timeout):
            raise self._full()
        handle: SendHandle[RecordMetadata] = Future()
        handle.set_running_or_notify_cancel()  # a queued turn cannot be taken back
        try:
            with self._lock:
                loop = self._started_loop()
                queued = asyncio.run_coroutine_threadsafe(self._queue(key, value, items, handle, deadline), loop)
            queued.result()
        except CancelledError:
            self._room.release()
            raise ProducerClosedError("the producer was closed while this turn waited for room") from None
        except BaseException:
            self._room.release()
            raise
        handle.add_done_callback(lambda _: self._room.release())
        return handle

    def flush(self, timeout: float | None = None) -> None:
        """Wait until every queued turn is acknowledged; TimeoutError after `timeout` seconds."""
        if self._loop is not None and not self._closed:
            asyncio.run_coroutine_threadsafe(self.turn_producer.flush(), self._loop).result(timeout)

    def close(self, timeout: float | None = None) -> None:
        """Deliver what is queued, then disconnect; again is a no-op. Also run at exit.

        TimeoutError when the broker has not acknowledged everything within `timeout` seconds; the
        producer still finishes in the background, and each pending handle still gets its outcome.
        """
        with self._lock:
            if self._closed:
                return
            self._closed = True
            loop = self._loop
        atexit.unregister(self.close)
        if loop is None:
            return
        stopped = asyncio.run_coroutine_threadsafe(self._shutdown(), loop)
        # the loop stops once the shutdown is over, even after this call gave up waiting for it
        stopped.add_done_callback(lambda _: loop.call_soon_threadsafe(loop.stop))
        stopped.result(timeout)

    def _started_loop(self) -> asyncio.AbstractEventLoop:
        """The running loop with a started producer (called holding the lock)."""
        if self._closed:
            raise ProducerClosedError("the producer is closed: send before close(), or make a new one")
        if self._loop is None:
            loop = asyncio.new_event_loop()
            threading.Thread(target=_run_forever, args=(loop,), name="turnstream-producer", daemon=True).start()
            try:
                asyncio.run_coroutine_threadsafe(self._start(), loop).result()
            except BaseException:
                loop.call_soon_threadsafe(loop.stop)
                raise
            self._loop = loop
            atexit.register(self.close, EXIT_TIMEOUT)
        return self._loop

    async def _start(self) -> None:
        from aiokafka.errors import KafkaConnectionError, KafkaError

        try:
            await self.turn_producer.start()
        except KafkaError as error:
            refusal = await kafka_refusal(self.settings) if isinstance(error, KafkaConnectionError) else None
            reason = kafka_refusal_reason(refusal) if refusal else str(error) or type(error).__name__
            raise ProducerStartError(f"cannot start the turn producer on {self._servers}: {reason}") from error

    async def _queue(
        self,
        key: bytes | None,
        value: bytes | None,
        headers: list[tuple[str, bytes]],
        handle: SendHandle[RecordMetadata],
        deadline: float,
    ) -> None:
        """Put the record in aiokafka's buffer, waiting for room until `deadline`; its outcome goes to `handle`."""
        from aiokafka.errors import KafkaTimeoutError

        try:
            delivery = await asyncio.wait_for(
                self.turn_producer.send_raw(key, value, headers), deadline - time.monotonic()
            )
        except (TimeoutError, KafkaTimeoutError):
            raise self._full() from None
        except Exception as error:  # e.g. MessageSizeTooLargeError: the caller learns it from the handle
            handle.set_exception(error)
            return
        delivery.add_done_callback(partial(_settle, handle))

    async def _shutdown(self) -> None:
        try:
            await self.turn_producer.stop()
        finally:
            # sends still waiting for room get ProducerClosedError
            waiting = asyncio.all_tasks() - {asyncio.current_task()}
            for task in waiting:
                task.cancel()
            await asyncio.gather(*waiting, return_exceptions=True)

    @property
    def _servers(self) -> str:
        return ", ".join(self.settings.bootstrap_servers)

    def _full(self) -> ProducerBufferFull:
        return ProducerBufferFull(
            f"no room for the turn within {self.send_timeout:g} s: {self.max_pending} turns wait "
            f"for the broker at {self._servers} (down, or slower than the sends)"
        )

    def __enter__(self) -> SyncTurnProducer:
        self.start()
        return self

    def __exit__(self, *exc: type[BaseException] | BaseException | TracebackType | None) -> None:
        self.close()


def _run_forever(loop: asyncio.AbstractEventLoop) -> None:
    asyncio.set_event_loop(loop)
    try:
        loop.run_forever()
    finally:
        loop.close()


def _settle(handle: SendHandle[RecordMetadata], delivery: asyncio.Future[RecordMetadata]) -> None:
    """The broker's answer, copied to the caller's handle."""
    if delivery.cancelled():
        handle.set_exception(ProducerClosedError("the producer stopped before the broker acknowledged the turn"))
    elif (error := delivery.exception()) is not None:
        handle.set_exception(error)
    else:
        handle.set_result(delivery.result())
