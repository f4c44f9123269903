"""The pure per-session state machine: a turn or a summary in, effects out; no Kafka, no Redis."""

from turnstream.session.core import SessionCore, Step
from turnstream.session.reorder import Forwarded
from turnstream.session.state import SessionState, SnapshotError
from turnstream.session.summaries import SummaryRequest, SummaryRequests, SummaryResult

__all__ = ["Forwarded", "SessionCore", "SessionState", "SnapshotError", "Step", "SummaryRequest", "SummaryRequests", "SummaryResult"]
