"""Gateway side: TurnProducer (turns into Kafka) and ContextClient (compacted context out of Redis)."""

from turnstream.client.context import ContextClient, WaitResult
from turnstream.client.producer import TurnProducer
from turnstream.client.store import ContextStore, SessionKeys

__all__ = ["ContextClient", "ContextStore", "SessionKeys", "TurnProducer", "WaitResult"]
