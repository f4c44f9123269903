"""Where a turn's time goes in the worker during a drain: its stage histograms, scraped before and after."""

from __future__ import annotations

from dataclasses import dataclass, field

from prometheus_client.parser import text_string_to_metric_families

from turnstream.errors import TurnstreamError
from turnstream.metrics import STAGES

PER_TURN_STAGES = ("ingest", "compaction")
"""Observed once a batch as that batch's time per turn: their mean over batches is a turn's share."""
PER_BATCH_STAGES = ("redis_write", "journal_write", "table_write")
"""Observed once a batch for the whole batch: their sum over the turns applied is a turn's share."""
STAGE_NAMES = {
    "ingest": "decode",
    "compaction": "core",
    "redis_write": "Redis write",
    "journal_write": "journal write",
    "table_write": "Table write",
}
"""How the table names the stages: decode is the turn's bytes to a Turn; core is the Table read, the state's
restore and the pure core; the Redis write builds the documents and makes the round trip; the journal write
sends the memory and archive records to the memory journal and waits for the broker to confirm them; the
Table write serialises the rows and waits for the broker to confirm them."""


class ScrapeError(TurnstreamError, ValueError):
    """The metrics text lacks what the stage table needs."""


@dataclass(frozen=True)
class Scrape:
    """The worker's stage histograms (sum in seconds, observation count) and its applied turns, at one moment."""

    sums: dict[str, float] = field(default_factory=dict)
    counts: dict[str, float] = field(default_factory=dict)
    applied: float = 0.0

    @classmethod
    def parse(cls, text: str) -> Scrape:
        """From the Prometheus text a worker serves on its metrics port; a stage not yet observed counts as zero."""
        sums = dict.fromkeys(STAGES, 0.0)
        counts = dict.fromkeys(STAGES, 0.0)
        applied = 0.0
        found = False
        for family in text_string_to_metric_families(text):
            for sample in family.samples:
                stage = sample.labels.get("stage")
                if sample.name == "turnstream_stage_seconds_sum" and stage in sums:
                    sums[stage] = sample.value
                elif sample.name == "turnstream_stage_seconds_count" and stage in counts:
                    counts[stage] = sample.value
                elif sample.name == "turnstream_turns_total":
                    found = True
                    applied += sample.value if sample.labels.get("outcome") == "applied" else 0.0
        if not found and not any(counts.values()):
            raise ScrapeError("no turnstream stage or turn metrics in the scraped text")
        return cls(sums, counts, applied)

    def __sub__(self, earlier: Scrape) -> Scrape:
        return Scrape(
            {s: v - earlier.sums.get(s, 0.0) for s, v in self.sums.items()},
            {s: v - earlier.counts.get(s, 0.0) for s, v in self.counts.items()},
            self.applied - earlier.applied,
        )

    def __add__(self, other: Scrape) -> Scrape:
        stages = set(self.sums) | set(other.sums)
        return Scrape(
            {s: self.sums.get(s, 0.0) + other.sums.get(s, 0.0) for s in stages},
            {s: self.counts.get(s, 0.0) + other.counts.get(s, 0.0) for s in stages},
            self.applied + other.applied,
        )


def per_turn_us(delta: Scrape, wall_seconds: float) -> dict[str, float]:
    """µs per applied turn of each stage, of the rest of the wall time (fetching, acknowledging and committing
    offsets, waiting), and of the whole; with the mean events per batch. Empty when no turn was applied."""
    turns = delta.applied
    if turns <= 0:
        return {}
    shares = {}
    for stage in PER_TURN_STAGES:
        batches = delta.counts.get(stage, 0.0)
        shares[stage] = delta.sums.get(stage, 0.0) / batches * 1e6 if batches else 0.0
    for stage in PER_BATCH_STAGES:
        shares[stage] = delta.sums.get(stage, 0.0) / turns * 1e6
    wall = wall_seconds / turns * 1e6
    batches = delta.counts.get("table_write", 0.0)
    return {
        **shares,
        "rest": wall - sum(shares.values()),
        "wall": wall,
        "events_per_batch": turns / batches if batches else 0.0,
    }


def fresh_turn_ms(delta: Scrape) -> dict[str, float]:
    """Where a turn's time went while the worker was fed slowly, in mean ms: from its produce until the worker
    stepped it (the broker's fetch wait, the batch window, waiting behind the previous batch), decode and core
    per turn, and per batch the Redis write (the turn is readable at its end), then the journal and Table
    writes (after it, holding the next batch back); with the mean events per batch. Empty when no batch was
    written."""
    batches = delta.counts.get("table_write", 0.0)
    if batches <= 0:
        return {}

    def mean(stage: str) -> float:
        count = delta.counts.get(stage, 0.0)
        return delta.sums.get(stage, 0.0) / count * 1000 if count else 0.0

    return {
        **{stage: mean(stage) for stage in ("broker_wait", *STAGE_NAMES)},
        "events_per_batch": delta.applied / batches,
    }
