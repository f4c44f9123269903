"""Prometheus metrics of a worker: per-stage latency histograms, outcome counters and health gauges."""

from __future__ import annotations

from prometheus_client import Counter, Gauge, Histogram

STAGES = ("broker_wait", "ingest", "compaction", "redis_write", "journal_write", "table_write")
"""The hot path's stages, in order: broker wait, decode (ingest) and core (compaction) per turn, the Redis
round trip, the memory journal's records until the broker acks them and the Table rows per batch. Context
documents carry the per-turn ones and the last write's."""

stage_seconds = Histogram(
    "turnstream_stage_seconds",
    "Time spent per pipeline stage",
    ["stage"],
    buckets=(0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10),
)
turns_total = Counter("turnstream_turns_total", "Turns consumed, by outcome", ["outcome"])
llm_requests_total = Counter("turnstream_llm_requests_total", "Asynchronous LLM requests, by outcome", ["outcome"])
llm_facts_discarded_total = Counter(
    "turnstream_llm_facts_discarded_total",
    "Key facts an LLM extracted and the summarizer discarded: an identifier or number in them is not in their turns",
)
dead_letters_total = Counter(
    "turnstream_dead_letters_total", "Turns sent to the dead-letter topic, by reason", ["reason"]
)
rekeyed_total = Counter(
    "turnstream_rekeyed_turns_total",
    "Turns whose Kafka key was not their session key, forwarded under it to their session's partition, by reason",
    ["reason"],
)
REKEY_REASONS = ("null_key", "wrong_key", "reordered")
for _reason in REKEY_REASONS:  # each reads 0 from the start: "none forwarded" is a sample, not a missing series
    rekeyed_total.labels(_reason)


def observe_ms(stage: str, milliseconds: float) -> None:
    stage_seconds.labels(stage).observe(milliseconds / 1000)


sessions_expired_total = Counter(
    "turnstream_sessions_expired_total", "Sessions removed from the Table after their idle TTL"
)
contexts_resynced_total = Counter(
    "turnstream_contexts_resynced_total", "Contexts written back from the Table after Redis lost them"
)
journal_replayed_total = Counter(
    "turnstream_journal_replayed_total", "Memories and archived turns written back from the memory journal", ["kind"]
)
redis_failovers_detected_total = Counter(
    "turnstream_redis_failovers_detected_total",
    "Times a re-sync found Redis's primary changed (its replication id) since it last found its data whole, by kind "
    "(contexts: this worker's partitions compared with the Table; journal: the memory journal replayed)",
    ["kind"],
)
for _kind in ("contexts", "journal"):  # each reads 0 from the start
    redis_failovers_detected_total.labels(_kind)
redis_write_retries_total = Counter(
    "turnstream_redis_write_retries_total", "Redis writes retried after a connection error or timeout"
)
refetches_total = Counter(
    "turnstream_refetches_total",
    "Input partitions fetched again because fetched records never "
    "reached the session agent, by how it showed: a later record (gap) or none (stalled)",
    ["reason"],
)
rebalances_total = Counter(
    "turnstream_rebalances_total", "Rebalances this worker took part in (each ends with a new assignment)"
)
assigned_partitions = Gauge(
    "turnstream_assigned_partitions", "Input partitions (changelogs not counted) assigned to this worker"
)
consumer_lag = Gauge(
    "turnstream_consumer_lag",
    "Records of an assigned input partition not yet committed: the fetch high watermark minus the committed offset",
    ["topic", "partition"],
)
sessions_held = Gauge("turnstream_sessions_held", "Sessions in the local Table for this worker's partitions")
build_info = Gauge("turnstream_build_info", "Versions this worker runs; always 1", ["version", "python", "faust"])
turns_embedded_total = Counter("turnstream_turns_embedded_total", "Archived turns embedded for semantic recall")
embedding_restarts_total = Counter(
    "turnstream_embedding_restarts_total", "Embedding processes started again after the one embedding a batch died"
)
embedding_lag_seconds = Histogram(
    "turnstream_embedding_lag_seconds",
    "From an archived turn's journal record to its vector in Redis",
    buckets=(0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60),
)
