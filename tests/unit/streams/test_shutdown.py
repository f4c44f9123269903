"""The stop deadline: a worker whose graceful stop hangs exits by itself, once, with its own status."""

from __future__ import annotations

import threading
import time

from turnstream.streams.shutdown import EXIT_STOP_TIMEOUT, StopDeadline


def test_the_deadline_exits_once_with_its_status_after_the_timeout() -> None:
    exits: list[int] = []
    done = threading.Event()

    def exit_(status: int) -> None:
        exits.append(status)
        done.set()

    deadline = StopDeadline(0.05, exit=exit_)
    deadline.start()
    deadline.start()  # a second signal does not start a second clock
    assert done.wait(5)
    time.sleep(0.2)
    assert exits == [EXIT_STOP_TIMEOUT]


def test_no_exit_before_the_deadline() -> None:
    exits: list[int] = []
    deadline = StopDeadline(30, exit=exits.append)
    deadline.start()
    assert deadline._timer is not None and deadline._timer.daemon  # it never holds the process up itself
    deadline._timer.cancel()
    assert exits == []
