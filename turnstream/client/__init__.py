"""Gateway side: TurnProducer (turns into Kafka), ContextClient (compacted context out of Redis, asyncio)
and SyncContextClient (the same for threaded gateways)."""

from turnstream.client.context import ContextClient
from turnstream.client.producer import TurnProducer
from turnstream.client.reads import WaitResult
from turnstream.client.store import ContextStore
from turnstream.client.sync import SyncContextClient
from turnstream.schemas.keys import SessionKeys

__all__ = ["ContextClient", "ContextStore", "SessionKeys", "SyncContextClient", "TurnProducer", "WaitResult"]
