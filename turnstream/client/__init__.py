"""Gateway side: TurnProducer (turns into Kafka), ContextClient (compacted context out of Redis, asyncio),
SyncTurnProducer and SyncContextClient (the same for threaded gateways), and GatewayClient and
SyncGatewayClient (both halves, with `record`: produce and wait until the context includes the turn)."""

from turnstream.client.context import ContextClient
from turnstream.client.contexts import ContextReader
from turnstream.client.errors import ClientError, ProducerBufferFull, ProducerClosedError, ProducerStartError, RecordTimeout
from turnstream.client.gateway import GatewayClient, SyncGatewayClient
from turnstream.client.producer import TurnProducer
from turnstream.client.reads import WaitResult
from turnstream.client.sync import SyncContextClient
from turnstream.client.sync_producer import SendHandle, SyncTurnProducer
from turnstream.schemas.keys import SessionKeys

__all__ = [
    "ClientError", "ContextClient", "ContextReader", "GatewayClient", "ProducerBufferFull", "ProducerClosedError",
    "ProducerStartError", "RecordTimeout", "SendHandle", "SessionKeys", "SyncContextClient", "SyncGatewayClient",
    "SyncTurnProducer", "TurnProducer", "WaitResult",
]
