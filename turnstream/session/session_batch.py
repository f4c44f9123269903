"""One batch's sessions, pure: every item stepped in order on one state per session, loaded once per batch
through a replaceable loader; a forget wipes what the batch did for its session; a failed item leaves no trace.

What each item came in (`source`: the agent's envelope) is carried along untouched, for the effects to be
attributed to it (a Table row to its event's changelog partition, trace headers to what is produced for it).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Generic, Protocol, TypeVar

from turnstream.schemas.control import ForgetRequest
from turnstream.session.core import Input, SessionCore, Step
from turnstream.session.rules import ERASED, Loaded, Skip, opening
from turnstream.session.state import SessionState

S = TypeVar("S")


class StateLoader(Protocol):
    """Where a batch finds the state of a session it holds none of yet: the Table row, restored, or the state
    kept live (session/live.py). The batch changes what it gets, so a loader that keeps states must hand out one
    it may change, and take the batch's states back only once they are stored."""

    def load(self, key: str) -> Loaded: ...


@dataclass
class SessionBatch(Generic[S]):
    """The sessions of one batch and the steps their items asked for, in item order."""

    loader: StateLoader
    core: SessionCore
    states: dict[str, SessionState] = field(default_factory=dict)
    last_source: dict[str, S] = field(default_factory=dict)
    """Per session, the source of its latest stepped item: its Table row is attributed to it."""
    inputs: defaultdict[str, list[Input]] = field(default_factory=lambda: defaultdict(list))
    """Per session, what this batch fed its state: enough to rebuild it if one item breaks it."""
    steps: list[tuple[Step, S]] = field(default_factory=list)
    """Every step, with the source of the item that asked for it."""
    forgotten: dict[str, tuple[S, ForgetRequest]] = field(default_factory=dict)
    """Sessions erased by a forget in this batch: their row becomes a forget marker."""

    def apply(self, key: str, item: Input, source: S, now: float) -> Step | Skip:
        """Step session `key` with `item`; raises whatever the core or the loader raise (then `rebuild`)."""
        result = self._step(key, item, now)
        if isinstance(result, Step):
            self.inputs[key].append(item)
            self.last_source[key] = source
            self.steps.append((result, source))
        return result

    def erase(self, key: str, request: ForgetRequest, source: S) -> None:
        """Drop everything this batch did for the session so far; its row becomes a forget marker."""
        self.forgotten[key] = (source, request)
        for part in (self.states, self.inputs, self.last_source):
            part.pop(key, None)
        self.steps = [(step, came) for step, came in self.steps if step.session_key != key]

    def rebuild(self, key: str, now: float) -> None:
        """The session's state as its loader has it plus this batch's earlier inputs, applied again (the core is
        deterministic): an item that failed half-way leaves no trace in it."""
        self.states.pop(key, None)
        for item in self.inputs[key]:
            self._step(key, item, now)

    def rows(self) -> list[tuple[str, SessionState | ForgetRequest, S]]:
        """What each session's row becomes, with the source it is attributed to: its state, or its erasure."""
        rows: list[tuple[str, SessionState | ForgetRequest, S]] = [
            (key, state, self.last_source[key]) for key, state in self.states.items() if key in self.last_source
        ]
        return rows + [(key, request, source) for key, (source, request) in self.forgotten.items()]

    def _step(self, key: str, item: Input, now: float) -> Step | Skip:
        state = self.states.get(key)  # a session this batch holds is neither erased nor to be loaded again
        if state is None:
            opened = opening(key, item, ERASED if key in self.forgotten else self.loader.load(key), self.core)
            if isinstance(opened, Skip):
                return opened
            state = self.states[key] = opened
        return self.core.on_input(state, item, now)
