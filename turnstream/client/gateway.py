"""GatewayClient and SyncGatewayClient: a producer and a context client, and `record`, produce-and-wait in one call.

`record` produces a session's new turns in order, waits until the broker acknowledged all of them, then
until the session's context includes the last one, and returns that context's version.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import time
from collections.abc import Collection, Sequence
from types import TracebackType
from typing import Any

from turnstream.client.context import ContextClient
from turnstream.client.errors import RecordTimeout
from turnstream.client.producer import TurnProducer, turn_record
from turnstream.client.reads import WaitResult
from turnstream.client.sync import SyncContextClient
from turnstream.client.sync_producer import SyncTurnProducer
from turnstream.schemas.turn import Turn
from turnstream.settings import Settings

TurnInput = Turn | dict[str, Any]


def prepared(turns: TurnInput | Sequence[TurnInput]) -> list[tuple[Turn, bytes]]:
    """The turns `record` sends, validated (TurnError) and of one session, each with its input-topic value."""
    records = [turn_record(turn) for turn in ([turns] if isinstance(turns, (Turn, dict)) else turns)]
    sessions = {turn.session_key for turn, _ in records}
    if len(sessions) != 1:
        raise ValueError(f"record takes the turns of one session, got {len(sessions)}: {sorted(sessions)[:3]}")
    return records


def check_acknowledged(
    sent: Sequence[asyncio.Future[Any] | concurrent.futures.Future[Any]],
    pending: Collection[object],
    last: Turn,
    timeout: float,
) -> None:
    """Raise the first broker error among the `sent` turns, else RecordTimeout if some are still `pending`."""
    for future in sent:
        if future.done():
            future.result()
    if pending:
        raise RecordTimeout(last.session_key, last.turn_id, timeout, "acknowledged by the broker")


def fresh_version(result: WaitResult, last: Turn, timeout: float) -> int:
    """The version of the context that includes `last`; RecordTimeout when the wait ended without it."""
    if not result.fresh or result.doc is None:
        raise RecordTimeout(last.session_key, last.turn_id, timeout, "in the context")
    return result.doc.version


def _left(deadline: float) -> float:
    return max(0.0, deadline - time.monotonic())


class GatewayClient:
    """A TurnProducer and a ContextClient on the same settings (asyncio): `async with GatewayClient(settings)`."""

    def __init__(self, settings: Settings, **producer_options: Any) -> None:
        """`producer_options` go to AIOKafkaProducer, as for TurnProducer."""
        self.settings = settings
        self.producer = TurnProducer(settings, **producer_options)
        self.context = ContextClient.from_settings(settings)

    @classmethod
    def from_settings(cls, settings: Settings, **producer_options: Any) -> GatewayClient:
        """The same as GatewayClient(settings, ...), named as ContextClient.from_settings."""
        return cls(settings, **producer_options)

    async def record(self, turns: TurnInput | Sequence[TurnInput], *, timeout: float | None = None) -> int:
        """Produce one turn or a session's turns in order; the version of the first context that includes the last.

        `timeout` defaults to the settings' record_timeout_seconds."""
        timeout = self.settings.record_timeout_seconds if timeout is None else timeout
        records = prepared(turns)
        return fresh_version(await self._send_and_wait(records, timeout), records[-1][0], timeout)

    async def record_wait(self, turns: TurnInput | Sequence[TurnInput], *, timeout: float | None = None) -> WaitResult:
        """As `record`, but a context that does not include the last turn in time is returned (fresh=False) rather
        than raised: what a caller that answers "not yet, here is the version there is" needs. RecordTimeout
        still when the broker did not acknowledge every turn in time."""
        timeout = self.settings.record_timeout_seconds if timeout is None else timeout
        return await self._send_and_wait(prepared(turns), timeout)

    async def _send_and_wait(self, records: list[tuple[Turn, bytes]], timeout: float) -> WaitResult:
        deadline = time.monotonic() + timeout
        sent = [await self.producer.send_raw(turn.session_key.encode(), value) for turn, value in records]
        last = records[-1][0]
        _, pending = await asyncio.wait(sent, timeout=_left(deadline))
        check_acknowledged(sent, pending, last, timeout)
        return await self.context.wait_for(last.session_id, last.turn_id, _left(deadline), last.tenant, last.user_id)

    async def start(self) -> None:
        await self.producer.start()

    async def aclose(self) -> None:
        try:
            await self.producer.stop()
        finally:
            await self.context.aclose()

    async def __aenter__(self) -> GatewayClient:
        await self.start()
        return self

    async def __aexit__(self, *exc: type[BaseException] | BaseException | TracebackType | None) -> None:
        await self.aclose()


class SyncGatewayClient:
    """A SyncTurnProducer and a SyncContextClient on the same settings; one per process, shared by every thread."""

    def __init__(self, settings: Settings, **producer_options: Any) -> None:
        """`producer_options` go to SyncTurnProducer (send_timeout, max_pending) and on to AIOKafkaProducer."""
        self.settings = settings
        self.producer = SyncTurnProducer(settings, **producer_options)
        self.context = SyncContextClient.from_settings(settings)

    @classmethod
    def from_settings(cls, settings: Settings, **producer_options: Any) -> SyncGatewayClient:
        """The same as SyncGatewayClient(settings, ...), named as SyncContextClient.from_settings."""
        return cls(settings, **producer_options)

    def record(self, turns: TurnInput | Sequence[TurnInput], *, timeout: float | None = None) -> int:
        """Produce one turn or a session's turns in order; the version of the first context that includes the last.

        `timeout` defaults to the settings' record_timeout_seconds."""
        timeout = self.settings.record_timeout_seconds if timeout is None else timeout
        deadline = time.monotonic() + timeout
        records = prepared(turns)
        sent = [self.producer.send_raw(turn.session_key.encode(), value) for turn, value in records]
        last = records[-1][0]
        _, pending = concurrent.futures.wait(sent, timeout=_left(deadline))
        check_acknowledged(sent, pending, last, timeout)
        result = self.context.wait_for(last.session_id, last.turn_id, _left(deadline), last.tenant, last.user_id)
        return fresh_version(result, last, timeout)

    def start(self) -> None:
        """Connect the producer now rather than on the first record."""
        self.producer.start()

    def close(self) -> None:
        try:
            self.producer.close()
        finally:
            self.context.close()

    def __enter__(self) -> SyncGatewayClient:
        self.start()
        return self

    def __exit__(self, *exc: type[BaseException] | BaseException | TracebackType | None) -> None:
        self.close()
