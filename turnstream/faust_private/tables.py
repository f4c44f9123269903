"""Table rows written and read as Faust's own stream code does.

Relies on (faust-streaming):
- `faust.streams._current_event`: the context variable that names the event a Table write is attributed to;
  the row goes to that event's partition of the changelog. A batch's rows are written after its events were
  taken, so each row's event is set here for its write (`attributed_to`);
- `Table._to_key`: how a Table turns a changelog record's key into its own key type (`table_key`).
"""

from __future__ import annotations

import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from faust.streams import _current_event
from faust.types import EventT, TableT


@contextmanager
def attributed_to(event: EventT) -> Iterator[None]:
    """Table writes in the block go to the changelog partition of `event`, as if made while it was processed."""
    token = _current_event.set(weakref.ref(event))
    try:
        yield
    finally:
        _current_event.reset(token)


def table_key(table: TableT, key: Any) -> Any:
    """A changelog record's key as `table` keys its rows."""
    return table._to_key(key)  # type: ignore[attr-defined]
