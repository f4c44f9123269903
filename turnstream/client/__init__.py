"""Gateway side: TurnProducer (turns into Kafka), ContextClient (compacted context out of Redis, asyncio),
SyncTurnProducer and SyncContextClient (the same for threaded gateways), and GatewayClient and
SyncGatewayClient (both halves, with `record`: produce and wait until the context includes the turn).

Names are loaded when first asked for: a gateway that only reads (ContextClient) loads no Kafka client.
"""

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from turnstream.client.context import ContextClient
    from turnstream.client.errors import (
        ClientError,
        ProducerBufferFull,
        ProducerClosedError,
        ProducerStartError,
        RecordTimeout,
    )
    from turnstream.client.gateway import GatewayClient, SyncGatewayClient
    from turnstream.client.producer import TurnProducer
    from turnstream.client.reads import WaitResult
    from turnstream.client.sync import SyncContextClient
    from turnstream.client.sync_producer import SendHandle, SyncTurnProducer
    from turnstream.redis.keys import SessionKeys
    from turnstream.redis.reader import ContextReader

_WHERE = {
    "ClientError": "turnstream.client.errors",
    "ProducerBufferFull": "turnstream.client.errors",
    "ProducerClosedError": "turnstream.client.errors",
    "ProducerStartError": "turnstream.client.errors",
    "RecordTimeout": "turnstream.client.errors",
    "ContextClient": "turnstream.client.context",
    "GatewayClient": "turnstream.client.gateway",
    "SyncGatewayClient": "turnstream.client.gateway",
    "TurnProducer": "turnstream.client.producer",
    "WaitResult": "turnstream.client.reads",
    "SyncContextClient": "turnstream.client.sync",
    "SendHandle": "turnstream.client.sync_producer",
    "SyncTurnProducer": "turnstream.client.sync_producer",
    "SessionKeys": "turnstream.redis.keys",
    "ContextReader": "turnstream.redis.reader",
}


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(_WHERE[name]), name)


__all__ = [
    "ClientError",
    "ContextClient",
    "ContextReader",
    "GatewayClient",
    "ProducerBufferFull",
    "ProducerClosedError",
    "ProducerStartError",
    "RecordTimeout",
    "SendHandle",
    "SessionKeys",
    "SyncContextClient",
    "SyncGatewayClient",
    "SyncTurnProducer",
    "TurnProducer",
    "WaitResult",
]
