"""The API's Prometheus metrics, in a registry of its own (the worker's stay in the default one)."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest

LATENCY_BUCKETS = (0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60)
"""Seconds: sub-millisecond for the reads, up to a long record wait."""


class ServeMetrics:
    """Per-route latency and replies by status; `route` is the route's path template, so the labels stay few."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self.latency = Histogram(
            "turnstream_serve_request_seconds",
            "Time to answer a request, by route and method",
            ["route", "method"],
            buckets=LATENCY_BUCKETS,
            registry=self.registry,
        )
        self.replies = Counter(
            "turnstream_serve_replies_total",
            "Replies, by route, method and status",
            ["route", "method", "status"],
            registry=self.registry,
        )

    def observe(self, route: str, method: str, status: int, seconds: float) -> None:
        self.latency.labels(route, method).observe(seconds)
        self.replies.labels(route, method, str(status)).inc()

    def exposition(self) -> bytes:
        return generate_latest(self.registry)
