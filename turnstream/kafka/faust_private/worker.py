"""A faust.Worker told of a stop signal before its stop begins.

Relies on `mode.Worker._schedule_shutdown` (mode-streaming): the one place SIGTERM and SIGINT reach before
the worker's stop; mode offers no hook of its own there.
"""

from __future__ import annotations

import signal

import faust


class Worker(faust.Worker):
    """faust.Worker that calls `on_stop_signal` when SIGTERM or SIGINT asks it to stop."""

    def on_stop_signal(self, sig: signal.Signals) -> None:
        """Called before the stop the signal begins."""

    def _schedule_shutdown(self, sig: signal.Signals) -> None:
        self.on_stop_signal(sig)
        super()._schedule_shutdown(sig)
