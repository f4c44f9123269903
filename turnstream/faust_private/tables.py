"""Table rows written and read as Faust's own stream code does.

Relies on (faust-streaming):
- `faust.streams._current_event`: the context variable that names the event a Table write is attributed to;
  the row goes to that event's partition of the changelog. A batch's rows are written after its events were
  taken, so each row's event is set here for its write (`attributed_to`);
- `Table._to_key`: how a Table turns a changelog record's key into its own key type (`table_key`);
- `TableManager.recovery`: the app's Table recovery, not declared on Faust's TableManagerT (`recovered`).
"""

from __future__ import annotations

import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, TypeVar, cast

from faust.streams import _current_event
from faust.tables.manager import TableManager
from faust.types import AppT, EventT, TableT

K = TypeVar("K")


@contextmanager
def attributed_to(event: EventT[Any]) -> Iterator[None]:
    """Table writes in the block go to the changelog partition of `event`, as if made while it was processed."""
    token = _current_event.set(weakref.ref(event))
    try:
        yield
    finally:
        _current_event.reset(token)


def recovered(app: AppT) -> bool:
    """Whether the app's Tables have recovered from their changelogs since the latest rebalance."""
    return cast(TableManager, app.tables).recovery.completed.is_set()


def table_key(table: TableT[K, Any], key: object) -> K:
    """A changelog record's key as `table` keys its rows."""
    found: K = table._to_key(key)  # type: ignore[attr-defined]  # private: Table's, not declared on TableT
    return found
