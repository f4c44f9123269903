"""Gateway side: TurnProducer (turns into Kafka), ContextClient (compacted context out of Redis, asyncio),
SyncTurnProducer and SyncContextClient (the same for threaded gateways), and GatewayClient and
SyncGatewayClient (both halves, with `record`: produce and wait until the context includes the turn).

Every name is imported here; the producers import aiokafka only when one is made, so a gateway that only reads
(ContextClient) loads no Kafka client (tests/unit/test_layers.py).
"""

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
