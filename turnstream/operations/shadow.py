"""A shadow: a worker under its own topic prefix that replays the live prefix's turns topic (`turnstream shadow`).

Everything it writes (its memory, summaries, compaction and dead-letter topics, its Faust app id, hence its
consumer group and Table changelog, every Redis key) is named by its own prefix, exactly as a worker's whose
TURNSTREAM_TOPIC_PREFIX is the shadow's name; only its input is the live one (TURNSTREAM_TURNS_FROM). Pure parts
first (its settings, its topics, where it starts), the broker and Redis calls after. docs/decisions/0046.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aiokafka import AIOKafkaConsumer, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient
from aiokafka.errors import GroupIdNotFound, KafkaError, NonEmptyGroup, for_code
from aiokafka.protocol.admin import DeleteGroupsRequest
from aiokafka.structs import OffsetAndMetadata
from pydantic import ValidationError

from turnstream.connections import kafka_options
from turnstream.errors import TurnstreamError
from turnstream.kafka.admin import embedder_group, faust_app_id, worker_topics
from turnstream.kafka.end_offsets import fetched_end_offsets
from turnstream.kafka.groups import group_commits, records_behind, until_coordinated
from turnstream.redis.prefix import count_prefix, delete_prefix
from turnstream.redis.shadow_mark import RUNNING_MARK_SECONDS, running_mark
from turnstream.settings import Settings

GIVEN_BY_THE_SHADOW = ("topic_prefix", "turns_from")
"""Settings `--set` may not change: the shadow's name and the live prefix it reads make them."""


class ShadowError(TurnstreamError, ValueError):
    """A shadow that cannot be made, started or dropped as asked; the message is one line."""


def parse_overrides(pairs: Iterable[str]) -> dict[str, str]:
    """`KEY=VALUE` pairs (KEY a setting's name, or its TURNSTREAM_ variable, any case) as setting names to values."""
    fields = Settings.model_fields
    overrides = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        name = key.strip().lower().removeprefix("turnstream_")
        if not sep or name not in fields:
            raise ShadowError(f"--set {pair!r}: use KEY=VALUE with KEY a setting (turnstream config lists them)")
        if name in GIVEN_BY_THE_SHADOW:
            raise ShadowError(f"--set {pair!r}: the shadow's name and TURNSTREAM_TOPIC_PREFIX give {name}")
        overrides[name] = value
    return overrides


def shadow_settings(
    live: Settings,
    name: str,
    overrides: Mapping[str, str] | None = None,
    *,
    llm: bool = False,
    llm_max_calls: int | None = None,
    rate: float | None = None,
) -> Settings:
    """The settings of shadow `name` of the `live` prefix: the live ones, then `overrides`; the LLM off unless `llm`;
    no fixed web or metrics port nor static membership of the live worker's (it runs beside it on one host)."""
    if name == live.topic_prefix:
        raise ShadowError(f"a shadow cannot be named {name!r}: that is the live prefix (TURNSTREAM_TOPIC_PREFIX)")
    values: dict[str, Any] = {**live.model_dump(), "web_port": 0, "metrics_port": None, "group_instance_id": None}
    values |= {**(overrides or {}), "topic_prefix": name, "turns_from": live.topic_prefix}
    if rate is not None:
        values["max_turns_per_second"] = rate
    if llm_max_calls is not None:
        values["llm_max_calls"] = llm_max_calls
    for alias in ("openai_base_url", "openai_api_key"):  # read from OPENAI_* as well: given under the variable name
        if alias in values:
            values[f"TURNSTREAM_{alias.upper()}"] = values.pop(alias)
    try:
        settings = Settings(**values)
    except ValidationError as error:
        first = error.errors()[0]
        raise ShadowError(f"shadow setting {'.'.join(map(str, first['loc']))}: {first['msg']}") from None
    if not llm:
        settings = settings.model_copy(update={"openai_base_url": None})  # its summaries take the offline path
    if settings.max_turns_per_second is not None:
        # a batch takes its tokens at once: no bigger than a second's worth, so the rate holds second by second
        cap = max(1, int(settings.max_turns_per_second))
        settings = settings.model_copy(update={"batch_max_events": min(settings.batch_max_events, cap)})
    return settings


def shadow_topics(shadow: Settings, live: Settings, existing: Iterable[str]) -> list[str]:
    """The topics of `existing` that are the shadow's: its own topics and Faust's of its app id, never the turns
    topic it reads nor any topic of the live worker's (a live prefix may begin like the shadow's app id)."""
    app_id, live_app_id = faust_app_id(shadow), faust_app_id(live)
    own = {shadow.memory_topic, shadow.summaries_topic, shadow.compaction_topic, shadow.dlq_topic}
    live_names = {spec.name for spec in worker_topics(live)} | {shadow.turns_topic}
    return sorted(
        topic
        for topic in set(existing)
        if (topic in own or topic.startswith(f"{app_id}-"))
        and topic not in live_names
        and not topic.startswith(f"{live_app_id}-")
    )


@dataclass(frozen=True)
class StartAt:
    """Where a new shadow's group starts on the turns topic: the beginning unless one of these is given."""

    offset: int | None = None
    """The same offset on every partition (clipped to what the partition holds)."""
    time_ms: int | None = None
    """The first record at or after this time (epoch ms) on each partition; past the end: the end."""


def start_offsets(
    asked: Mapping[int, int | None], starts: Mapping[int, int], ends: Mapping[int, int]
) -> dict[int, int]:
    """Per partition, the offset to commit: `asked` clipped into [start, end]; None (no record at or after a
    time) is the end."""
    return {
        partition: ends[partition] if offset is None else min(max(offset, starts[partition]), ends[partition])
        for partition, offset in asked.items()
    }


@dataclass(frozen=True)
class PartitionLag:
    partition: int
    committed: int | None
    """The shadow group's committed offset; None when it has none yet."""
    end: int
    """The turns topic's end offset."""

    @property
    def lag(self) -> int:
        return records_behind(self.end, self.committed)


class _Kafka:
    """An admin client and a group-less consumer, both started, closed on exit."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.admin = AIOKafkaAdminClient(**kafka_options(settings))

    async def __aenter__(self) -> _Kafka:
        await self.admin.start()
        try:
            self.consumer = AIOKafkaConsumer(**kafka_options(self.settings), group_id=None, enable_auto_commit=False)
            await self.consumer.start()
        except BaseException:
            await self.admin.close()
            raise
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.consumer.stop()
        await self.admin.close()

    async def partitions(self) -> list[TopicPartition]:
        """The turns topic's partitions; ShadowError when it does not exist."""
        topic = self.settings.turns_topic
        if topic not in await self.admin.list_topics():
            raise ShadowError(f"no topic {topic}: is {self.settings.turns_from!r} the live TURNSTREAM_TOPIC_PREFIX?")
        (described,) = await self.admin.describe_topics([topic])
        return sorted(TopicPartition(topic, p["partition"]) for p in described["partitions"])

    async def committed(self, partitions: list[TopicPartition]) -> dict[int, int | None]:
        topic = self.settings.turns_topic
        found = await group_commits(self.admin, faust_app_id(self.settings), topic, (tp.partition for tp in partitions))
        return {tp.partition: found.get(tp.partition) for tp in partitions}

    async def ends(self, partitions: list[TopicPartition]) -> dict[int, int]:
        listed = await self.consumer.end_offsets(partitions)
        ends = await fetched_end_offsets(kafka_options(self.settings), listed)  # Tansu lists short of a batch
        return {tp.partition: end for tp, end in ends.items()}


async def turn_partitions(settings: Settings) -> int:
    """How many partitions the live turns topic has (the shadow's summaries and Table must have as many)."""
    async with _Kafka(settings) as kafka:
        return len(await kafka.partitions())


async def lag(settings: Settings) -> list[PartitionLag]:
    """The shadow group's committed offsets against the turns topic's ends, per partition."""
    async with _Kafka(settings) as kafka:
        partitions = await kafka.partitions()
        committed = await kafka.committed(partitions)
        ends = await kafka.ends(partitions)
    return [PartitionLag(p, committed[p], ends[p]) for p in sorted(ends)]


async def commit_start(settings: Settings, start: StartAt) -> str:
    """Commit the shadow group's starting offsets, unless it has committed any (then it resumes there); one line
    saying which. Without an offset or a time the group starts at the beginning (the worker's offset reset)."""
    async with _Kafka(settings) as kafka:
        partitions = await kafka.partitions()
        if any(offset is not None for offset in (await kafka.committed(partitions)).values()):
            return "resuming at the shadow group's committed offsets"
        if start.offset is None and start.time_ms is None:
            return "starting at the beginning of " + settings.turns_topic
        starts = {tp.partition: o for tp, o in (await kafka.consumer.beginning_offsets(partitions)).items()}
        ends = await kafka.ends(partitions)
        if start.time_ms is not None:
            found = await kafka.consumer.offsets_for_times({tp: start.time_ms for tp in partitions})
            if any(at is not None and at.timestamp < start.time_ms for at in found.values()):
                # a record before the time asked: the broker did not look it up (Tansu answers offset 0, time -1)
                raise ShadowError("the broker does not look offsets up by time: use --from-offset")
            asked = {tp.partition: None if at is None else at.offset for tp, at in found.items()}
        else:
            asked = {tp.partition: start.offset for tp in partitions}
        offsets = start_offsets(asked, starts, ends)
    group = AIOKafkaConsumer(
        **kafka_options(settings), group_id=faust_app_id(settings), enable_auto_commit=False
    )  # a group commit needs no membership: the offsets are written for the group the worker then joins
    await group.start()
    try:
        group.assign(partitions)
        await group.commit(
            {TopicPartition(settings.turns_topic, p): OffsetAndMetadata(o, "") for p, o in offsets.items()}
        )
    finally:
        await group.stop()
    return f"starting at offsets {', '.join(f'{p}:{o}' for p, o in sorted(offsets.items()))} of {settings.turns_topic}"


@dataclass(frozen=True)
class Status:
    partitions: list[PartitionLag]
    keys: int
    """Redis keys under the shadow's prefix."""
    contexts: int
    turns_applied: int
    """The sum of its contexts' versions: one per turn applied."""


async def status(settings: Settings) -> Status:
    partitions = await lag(settings)
    found = await count_prefix(settings, settings.topic_prefix)
    return Status(partitions, found.keys, found.contexts, found.turns_applied)


@dataclass(frozen=True)
class Dropped:
    keys: int
    topics: list[str]
    groups: list[str]
    """The consumer groups deleted (the worker's and the embedders'; a group the broker did not have is left out)."""


async def drop(shadow: Settings, live: Settings, force: bool = False) -> Dropped:
    """Delete the shadow's Redis keys (those under `prefix:` only: `ab:` is not a prefix of `abc:`), its consumer
    groups, its topics and its local Faust folder; never anything of the live worker's. ShadowError while the shadow
    runs (its mark in Redis), unless `force`."""
    if shadow.topic_prefix == live.topic_prefix:
        raise ShadowError(
            f"refusing to drop {shadow.topic_prefix!r}: that is the live prefix (TURNSTREAM_TOPIC_PREFIX)"
        )
    if not force and (running := await running_mark(shadow, shadow.topic_prefix)):
        raise ShadowError(
            f"shadow {shadow.topic_prefix} is running ({running}): stop `turnstream shadow run` first (a killed "
            f"one's mark expires within {RUNNING_MARK_SECONDS * 3} s; --force drops it anyway)"
        )
    async with _Kafka(shadow) as kafka:
        groups = [
            group for group in (faust_app_id(shadow), embedder_group(shadow)) if await _delete_group(kafka.admin, group)
        ]
        topics = shadow_topics(shadow, live, await kafka.admin.list_topics())
        if topics:
            await kafka.admin.delete_topics(topics)
    keys = await delete_prefix(shadow, shadow.topic_prefix)
    shutil.rmtree(Path(shadow.data_dir) / f"{faust_app_id(shadow)}-data", ignore_errors=True)
    return Dropped(keys, topics, groups)


async def _delete_group(admin: AIOKafkaAdminClient, group: str) -> bool:
    """DeleteGroups (aiokafka's admin client has no call for it: its request, sent to the group's coordinator);
    False when the broker has no such group."""
    coordinator = await until_coordinated(lambda: admin.find_coordinator(group))
    response = await admin._send_request(DeleteGroupsRequest([group]), coordinator)  # noqa: SLF001 - see above
    ((_, code),) = response.results
    if code == NonEmptyGroup.errno:
        raise ShadowError(
            f"the shadow's group {group} still has a member: a killed `turnstream shadow run` leaves it after the "
            "session timeout (TURNSTREAM_BROKER_SESSION_TIMEOUT); drop it again then"
        )
    if code and code != GroupIdNotFound.errno:
        error: type[KafkaError] = for_code(code)
        raise ShadowError(f"cannot delete the group {group}: {error.__name__}")
    return not code
