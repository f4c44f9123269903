"""A Table write in `attributed_to(event)` is Faust's write while processing `event`; outside it, none is current."""

from __future__ import annotations

import pytest
from faust.streams import current_event

from turnstream.kafka.faust_private.table_rows import attributed_to

pytestmark = pytest.mark.unit


class Event:
    """Stands for a Faust event: the context variable only holds a weak reference to it."""


def test_the_event_is_current_inside_the_block_only() -> None:
    first, second = Event(), Event()
    assert current_event() is None
    with attributed_to(first):
        assert current_event() is first
        with attributed_to(second):
            assert current_event() is second
        assert current_event() is first
    assert current_event() is None


def test_the_event_is_reset_when_the_write_fails() -> None:
    with pytest.raises(KeyError), attributed_to(Event()):
        raise KeyError("row")
    assert current_event() is None
