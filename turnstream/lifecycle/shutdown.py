"""A graceful stop with a deadline: a worker told to stop is gone within TURNSTREAM_STOP_TIMEOUT_SECONDS.

Faust's stop waits for the agents, commits and leaves the consumer group. Now and then it never ends:
aiokafka's heartbeat loop keeps marking a vanished group coordinator dead, and the process outlives the
grace period its supervisor gives it, then is killed without a word. Past the deadline the worker says
why and exits itself. Nothing is lost: an offset is committed only after its effects are stored, so a
turn whose commit the stop did not reach is applied again by the partition's next owner (and skipped
there as a replay when it was applied already).
"""

from __future__ import annotations

import logging
import os
import signal
import sys
import threading
from collections.abc import Callable
from typing import Any

from turnstream.kafka.faust_private import worker

log = logging.getLogger(__name__)

EXIT_STOP_TIMEOUT = 3
"""The worker's exit status when its stop ran past the deadline."""


class StopDeadline:
    """Calls `exit(EXIT_STOP_TIMEOUT)` from a daemon thread `seconds` after the first `start()`."""

    def __init__(self, seconds: float, exit: Callable[[int], object] = os._exit) -> None:
        self.seconds = seconds
        self._exit = exit
        self._timer: threading.Timer | None = None

    def start(self) -> None:
        if self._timer is None:
            self._timer = threading.Timer(self.seconds, self._expire)
            self._timer.daemon = True  # a stop that finishes in time ends the process, timer and all
            self._timer.start()

    def _expire(self) -> None:
        log.error(
            "the graceful stop did not finish within %.0f s (TURNSTREAM_STOP_TIMEOUT_SECONDS); exiting now: "
            "turns whose offsets were not committed are applied again by the next owner",
            self.seconds,
        )
        logging.shutdown()
        self._exit(EXIT_STOP_TIMEOUT)


class Worker(worker.Worker):
    """faust.Worker whose stop on SIGTERM or SIGINT is bounded by a StopDeadline, without a start-up spinner, and
    that prints a ready line once it consumes."""

    def __init__(
        self, *args: Any, stop_timeout: float, ready: Callable[[], str] | None = None, **kwargs: Any
    ) -> None:  # faust.Worker's own, passed on
        """`ready` makes the line printed on stdout when the worker has its partitions and its state recovered."""
        super().__init__(*args, **kwargs)
        self.ready = ready
        # Faust's spinner puts the root logger at DEBUG (its handler spins on every record), so every
        # debug line of aiokafka and Faust, a few per fetch and per send, was built and then dropped:
        # about a tenth of an idle worker's main-thread CPU. A service has no terminal to spin on.
        self.spinner = None
        self.stop_deadline = StopDeadline(stop_timeout)

    def on_stop_signal(self, sig: signal.Signals) -> None:
        self.stop_deadline.start()

    async def on_startup_finished(self) -> None:
        """Faust calls this once the app has started and recovered its Tables: its agents consume from here."""
        await super().on_startup_finished()
        if self.ready is not None and not self.should_stop:
            # the process's own stdout: Faust's worker puts a logger in sys.stdout's place (a stray print becomes a
            # log line, one JSON object under TURNSTREAM_LOG_FORMAT=json), and this line is for whoever started it
            print(self.ready(), file=sys.__stdout__ or sys.stdout, flush=True)
            self.ready = None  # once: a restart of the app is no new start of the worker
