"""The app's partition signals with a type: mode types a signal's handler as taking anything after the sender,
so a handler of the partitions alone is connected through a receiver of that shape."""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from typing import Any

from faust.types import TP, AppT
from mode.types.signals import SignalT

PartitionsHandler = Callable[[set[TP]], Awaitable[None]]
"""What runs on a rebalance: given the partitions assigned (or revoked)."""


def on_assigned(app: AppT) -> Callable[[PartitionsHandler], PartitionsHandler]:
    """`@on_assigned(app)`: the handler runs with the partitions of every new assignment."""
    return functools.partial(_connect, app.on_partitions_assigned)


def on_revoked(app: AppT) -> Callable[[PartitionsHandler], PartitionsHandler]:
    """`@on_revoked(app)`: the handler runs with the partitions every rebalance revokes."""
    return functools.partial(_connect, app.on_partitions_revoked)


def _connect(signal: SignalT[Any], handler: PartitionsHandler) -> PartitionsHandler:
    async def receive(sender: Any, /, *args: Any, **kwargs: Any) -> None:  # (the app, the partitions, signal=…)
        (partitions,) = args
        await handler(partitions)

    signal.connect(receive)
    return handler
