"""The worker's lifecycle around its agents: startup (waiting for the broker and Redis, the READY line), a
graceful stop with a deadline, the health probes and the health gauges."""
