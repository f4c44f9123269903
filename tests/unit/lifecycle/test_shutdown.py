"""The worker process: a stop that hangs exits by itself, once, with its own status; logging stays at its level."""

from __future__ import annotations

import logging
import threading
import time

import faust

from turnstream.lifecycle.shutdown import EXIT_STOP_TIMEOUT, StopDeadline, Worker


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


def test_the_worker_keeps_the_root_logger_at_its_level() -> None:
    """Faust's spinner would put it at DEBUG, and every library debug line would be built, then dropped."""
    root = logging.getLogger()
    level, handlers = root.level, list(root.handlers)
    root.handlers = [logging.NullHandler()]
    try:
        worker = Worker(
            faust.App("turnstream-shutdown-test", store="memory://"), loglevel="warning", quiet=True, stop_timeout=30
        )
        root.setLevel(logging.WARNING)
        worker.on_setup_root_logger(root, logging.WARNING)
        assert root.level == logging.WARNING
        assert not root.isEnabledFor(logging.DEBUG)
    finally:
        root.setLevel(level)
        root.handlers = handlers
