"""Confirmations that run behind the batches they confirm: strictly in order, each while later batches go on.

A batch's confirmation is what comes after its effects are readable: waiting for the broker's acks, then
writing its Table rows and acknowledging its offsets. Nothing in it is needed by the next batch but the rows,
which the session agent hands over itself (`SessionExecutor.unconfirmed`), so the next batch need not wait
for those round trips. Confirmations still finish in the order their batches came: each starts its work
only once the one before it is done, and a failure fails every later one, so an offset is never
acknowledged after an earlier batch failed.
"""

from __future__ import annotations

import asyncio
from typing import Awaitable, Callable


async def to_the_end(work: Awaitable[None]) -> None:
    """Run `work` to its end even when the caller is cancelled meanwhile (a stop, a rebalance), then let the
    cancellation through: what it stores and acknowledges is never cut short between the two."""
    task = asyncio.ensure_future(work)
    cancelled = False
    while not task.done():
        try:
            await asyncio.shield(task)
        except asyncio.CancelledError:
            cancelled = True
    task.result()
    if cancelled:
        raise asyncio.CancelledError


class Confirmations:
    """A chain of confirmations; `on_failure` is told of the first one that fails, as soon as it does."""

    def __init__(self, on_failure: Callable[[BaseException], None]) -> None:
        self._on_failure = on_failure
        self._last: asyncio.Future[None] | None = None
        self._failed = False

    def add(self, confirm: Callable[[], Awaitable[None]]) -> None:
        """Run `confirm()` once every confirmation added before it is done; not if one of them failed."""
        previous = self._last

        async def after_previous() -> None:
            if previous is not None:
                await previous
            await confirm()

        self._last = asyncio.ensure_future(after_previous())
        self._last.add_done_callback(self._told)

    def check(self) -> None:
        """Raise the failure of a confirmation that is done and failed."""
        if self._last is not None and self._last.done():
            self._last.result()

    async def drain(self) -> None:
        """Wait until every confirmation is done, even when cancelled meanwhile; raise the first failure."""
        if self._last is not None:
            await to_the_end(self._last)

    def _told(self, done: asyncio.Future[None]) -> None:
        if self._failed or done.cancelled() or done.exception() is None:
            return
        self._failed = True
        self._on_failure(done.exception())  # type: ignore[arg-type]
