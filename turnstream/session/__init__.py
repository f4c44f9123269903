"""The pure per-session state machine: a turn or a summary in, effects out; no Kafka, no Redis, no client library."""

from turnstream.session.config import CoreConfig
from turnstream.session.core import Input, SessionCore, Step
from turnstream.session.live import LiveMap, LiveStates
from turnstream.session.reorder import Forwarded, HeldTurn
from turnstream.session.row_format import SnapshotError
from turnstream.session.rules import ERASED, Erased, Loaded, Skip, classify, loaded_from_row, opening
from turnstream.session.session_batch import SessionBatch, StateLoader
from turnstream.session.state import SessionState
from turnstream.session.summaries import SummaryRequests

__all__ = [
    "ERASED",
    "CoreConfig",
    "Erased",
    "Forwarded",
    "HeldTurn",
    "Input",
    "LiveMap",
    "LiveStates",
    "Loaded",
    "SessionBatch",
    "SessionCore",
    "SessionState",
    "Skip",
    "SnapshotError",
    "StateLoader",
    "Step",
    "SummaryRequests",
    "classify",
    "loaded_from_row",
    "opening",
]
