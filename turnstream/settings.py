"""Every setting turnstream reads, in one frozen object built from TURNSTREAM_* variables, grouped by concern."""

from __future__ import annotations

import re
import tempfile
from pathlib import Path
from typing import Any, Literal, Self

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, FilePath, SecretStr, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from turnstream.tls import kafka_ssl_context

_HOST_PORT = re.compile(r"^(?P<host>[A-Za-z0-9._\-]+|\[[0-9A-Fa-f:]+\]):(?P<port>\d{1,5})$")
_REDIS_SCHEMES = ("redis://", "rediss://", "unix://")
_SENTINEL_URL = re.compile(r"^rediss?://(?:[^@/]*@)?[^/?#@:,]+:\d{1,5}(?:,[^/?#@:,]+:\d{1,5})*(?:[/?].*)?$")
_URL_PASSWORD = re.compile(r"(?P<head>://[^/@:\s]*):[^/@\s]*@")
_QUERY_PASSWORD = re.compile(r"(?P<head>[?&]password=)[^&\s]*", re.IGNORECASE)
MASK = "***"
"""What stands in for a secret in every output."""

SASL_PROTOCOLS = ("SASL_PLAINTEXT", "SASL_SSL")
TLS_PROTOCOLS = ("SSL", "SASL_SSL")
APACHE_KAFKA_FETCH_WAIT_MS = 500
"""fetch.max.wait.ms of Apache Kafka's own clients: an idle worker asks twice a second, records come at once."""
BROKER_DEFAULT_REPLICATION = -1
"""replication_factor value meaning "the broker's default.replication.factor"."""


def mask_url(url: str) -> str:
    """`url` with the password of its user part (and any `password=` query value) replaced by ***."""
    return _QUERY_PASSWORD.sub(rf"\g<head>{MASK}", _URL_PASSWORD.sub(rf"\g<head>:{MASK}@", url))


def parse_kafka_url(url: str) -> list[str]:
    """`kafka://host:port[,host:port…]` (scheme optional) to aiokafka bootstrap servers."""
    body = url.removeprefix("kafka://")
    if "://" in body:
        raise ValueError(f"unsupported scheme in {url!r}: use kafka://host:port")
    servers = [part.strip() for part in body.split(",") if part.strip()]
    if not servers:
        raise ValueError(f"no broker address in {url!r}: use kafka://host:port")
    for server in servers:
        match = _HOST_PORT.match(server)
        if match is None or not 0 < int(match["port"]) < 65536:
            raise ValueError(f"bad broker address {server!r} in {url!r}: use kafka://host:port")
    return servers


TOPIC_PREFIX_PATTERN = r"^[A-Za-z0-9._\-]{1,100}$"
"""What a topic prefix (and so a key prefix, a shadow's name) may be."""


class KafkaSettings(BaseModel):
    """Settings of the broker, its security, the topics turnstream creates, and its producers and consumers."""

    model_config = ConfigDict(frozen=True, use_attribute_docstrings=True)

    kafka_url: str | None = None
    """Broker bootstrap, kafka://host:port[,host:port]; unset starts the embedded Tansu broker (see embedded)."""
    kafka_security_protocol: Literal["PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"] = "PLAINTEXT"
    """How every Kafka client (worker, producer, admin) talks to the broker: PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL."""
    kafka_sasl_mechanism: Literal["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"] = "PLAIN"
    """SASL mechanism with a SASL_* protocol: PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512."""
    kafka_sasl_username: str | None = None
    """SASL user name (required with a SASL_* protocol)."""
    kafka_sasl_password: SecretStr | None = None
    """SASL password (required with a SASL_* protocol); never printed."""
    kafka_ssl_cafile: FilePath | None = None
    """PEM file of the CA that signed the broker certificates (SSL, SASL_SSL); unset uses the system CAs."""
    kafka_ssl_certfile: FilePath | None = None
    """PEM client certificate for mutual TLS (SSL, SASL_SSL); may hold the key too."""
    kafka_ssl_keyfile: FilePath | None = None
    """PEM private key of the client certificate, when not inside kafka_ssl_certfile."""
    topic_prefix: str = Field("turnstream", pattern=TOPIC_PREFIX_PATTERN)
    """Prefix of every topic name and of the Faust app id."""
    turns_from: str | None = Field(None, pattern=r"^[A-Za-z0-9._\-]{1,100}$")
    """The prefix whose turns topic the worker reads; unset: its own. Set (by `turnstream shadow run`), the worker is a shadow: it reads that prefix's turns and writes everything else (its topics, group, Table, Redis keys) under topic_prefix, and never produces into the turns topic it reads."""
    turn_partitions: int = Field(8, ge=1, le=1024)
    """Partitions of the input topic: the unit of horizontal scale."""
    replication_factor: int = Field(BROKER_DEFAULT_REPLICATION, ge=-1, le=32767)
    """Replication factor of the topics turnstream creates; -1 asks the broker for its default.replication.factor."""
    dlq_retention_ms: int = Field(7 * 24 * 3600 * 1000, ge=-1)
    """retention.ms of the dead-letter topic when the worker creates it; -1 keeps dead letters forever."""
    idempotent_producer: Literal["auto", "on", "off"] = "auto"
    """Kafka idempotent producers (gateways' and the worker's): "auto" uses them where the broker issues producer ids
    (Tansu does not)."""
    producer_linger_ms: int = Field(0, ge=0, le=5_000)
    """How long the worker's producer (dead letters, summary requests, changelogs, the memory journal) waits to fill a batch."""
    producer_send_timeout_seconds: float = Field(10.0, gt=0)
    """How long a SyncTurnProducer send waits for room while producer_max_pending turns await the broker, then ProducerBufferFull."""
    producer_max_pending: int = Field(10_000, ge=1)
    """Turns a SyncTurnProducer holds sent and not yet acknowledged, at most (what it keeps while the broker does not answer)."""
    record_timeout_seconds: float = Field(10.0, gt=0)
    """How long `record` (GatewayClient, SyncGatewayClient, the agent-framework adapters) waits for a turn to be acknowledged and in the context."""
    consumer_fetch_wait_ms: int | None = Field(None, ge=0, le=30_000)
    """How long a worker's fetch waits at the broker for records; unset: 500 ms (Apache Kafka answers as soon as records arrive), 20 ms on a Tansu broker, whoever started it (Tansu waits it out; the worker knows it by its cluster id)."""
    broker_session_timeout: float = Field(10.0, gt=0)
    """Consumer-group session timeout (seconds): a killed worker's partitions move after about this long (Apache Kafka
    10–12 s, Tansu about 5 s more: its JoinGroup takes that long); raise it where a worker's pauses could outlast it."""
    broker_heartbeat_interval: float | None = Field(None, gt=0)
    """Seconds between a worker's heartbeats to the group; unset: a third of the session timeout, at most 3."""
    group_instance_id: str | None = Field(None, pattern=r"^[A-Za-z0-9._\-]{1,200}$")
    """Static group membership (Kafka's group.instance.id, unique per worker, e.g. a StatefulSet pod name): a worker restarted within the session timeout gets its partitions back without a rebalance."""

    @field_validator("kafka_url")
    @classmethod
    def _check_kafka_url(cls, value: str | None) -> str | None:
        if value:
            parse_kafka_url(value)
        return value or None

    @field_validator("replication_factor")
    @classmethod
    def _check_replication_factor(cls, value: int) -> int:
        if value == 0:
            raise ValueError("0 replicas: use -1 for the broker's default or a count of 1 or more")
        return value

    @model_validator(mode="after")
    def _check_kafka_security(self) -> Self:
        protocol = self.kafka_security_protocol
        if protocol in SASL_PROTOCOLS and not (self.kafka_sasl_username and self.kafka_sasl_password):
            raise ValueError(
                f"TURNSTREAM_KAFKA_SECURITY_PROTOCOL={protocol} needs TURNSTREAM_KAFKA_SASL_USERNAME and "
                "TURNSTREAM_KAFKA_SASL_PASSWORD"
            )
        tls_files = [f for f in ("kafka_ssl_cafile", "kafka_ssl_certfile", "kafka_ssl_keyfile") if getattr(self, f)]
        if tls_files and protocol not in TLS_PROTOCOLS:
            raise ValueError(
                f"TURNSTREAM_{tls_files[0].upper()} is set but TURNSTREAM_KAFKA_SECURITY_PROTOCOL={protocol} "
                "uses no TLS: use SSL or SASL_SSL"
            )
        if self.kafka_ssl_keyfile and not self.kafka_ssl_certfile:
            raise ValueError("TURNSTREAM_KAFKA_SSL_KEYFILE needs TURNSTREAM_KAFKA_SSL_CERTFILE")
        if protocol in TLS_PROTOCOLS:
            # unreadable PEM files fail here, in one line, not at the first connection
            kafka_ssl_context(self.kafka_ssl_cafile, self.kafka_ssl_certfile, self.kafka_ssl_keyfile)
        return self

    @property
    def bootstrap_servers(self) -> list[str]:
        """aiokafka bootstrap servers (requires kafka_url)."""
        if not self.kafka_url:
            raise RuntimeError("no broker configured")
        return parse_kafka_url(self.kafka_url)

    @property
    def fetch_wait_ms(self) -> int:
        """consumer_fetch_wait_ms, or Apache Kafka's own default when unset."""
        return APACHE_KAFKA_FETCH_WAIT_MS if self.consumer_fetch_wait_ms is None else self.consumer_fetch_wait_ms

    @property
    def heartbeat_seconds(self) -> float:
        """broker_heartbeat_interval, or a third of the session timeout (at most 3 s) when unset."""
        return self.broker_heartbeat_interval or min(3.0, self.broker_session_timeout / 3)

    @property
    def turns_topic(self) -> str:
        """The input topic: the turns_from prefix's when set, else the worker's own."""
        return f"{self.turns_from or self.topic_prefix}.turns"

    @property
    def is_shadow(self) -> bool:
        """Reads another prefix's turns topic (turns_from): produces nothing into it."""
        return self.turns_from is not None and self.turns_from != self.topic_prefix

    @property
    def memory_topic(self) -> str:
        """The memory journal (memory/journal.py): compacted, the durable source of memories, profiles and the archive."""
        return f"{self.topic_prefix}.memory"

    @property
    def dlq_topic(self) -> str:
        return f"{self.topic_prefix}.turns.dlq"

    @property
    def compaction_topic(self) -> str:
        return f"{self.topic_prefix}.compaction"

    @property
    def summaries_topic(self) -> str:
        return f"{self.topic_prefix}.summaries"


class RedisSettings(BaseModel):
    """Settings of where the contexts, memories and archive are stored."""

    model_config = ConfigDict(frozen=True, use_attribute_docstrings=True)

    redis_url: str | None = None
    """redis://host:port/db (rediss:// for TLS); unset starts an embedded redis-server (see embedded)."""
    redis_password: SecretStr | None = None
    """Redis password, used when redis_url carries none; never printed."""
    redis_cluster: bool = False
    """true: redis_url is one node of a Redis Cluster (or several, redis://n1:6379,n2:6379/0, tried in turn), reached through redis-py's cluster client."""
    redis_sentinel_master: str | None = None
    """Name of the primary that Sentinel watches; redis_url then lists the sentinels (redis://s1:26379,s2:26379/0)."""
    redis_ca_file: FilePath | None = None
    """PEM file of the CA that signed the Redis server certificate (rediss:// only); unset uses the system CAs."""

    @field_validator("redis_url")
    @classmethod
    def _check_redis_url(cls, value: str | None) -> str | None:
        if value and not value.startswith(_REDIS_SCHEMES):
            raise ValueError(f"bad Redis URL {mask_url(value)!r}: use redis://host:port/db")
        return value or None

    @model_validator(mode="after")
    def _check_redis_topology(self) -> Self:
        url = self.redis_url or ""
        if self.redis_cluster and not url.startswith(("redis://", "rediss://")):
            raise ValueError(
                "TURNSTREAM_REDIS_CLUSTER=true needs TURNSTREAM_REDIS_URL=redis://node:port (or rediss://)"
            )
        if self.redis_sentinel_master and (self.redis_cluster or not _SENTINEL_URL.match(url)):
            raise ValueError(
                "TURNSTREAM_REDIS_SENTINEL_MASTER needs TURNSTREAM_REDIS_URL=redis://s1:26379,s2:26379/0 "
                "(or rediss://), the sentinels' addresses, and no TURNSTREAM_REDIS_CLUSTER"
            )
        if self.redis_ca_file and not url.startswith("rediss://"):
            raise ValueError("TURNSTREAM_REDIS_CA_FILE is set but TURNSTREAM_REDIS_URL is not a rediss:// URL")
        return self


class CompactionSettings(BaseModel):
    """Settings of one session's compacted context and the rules before it."""

    model_config = ConfigDict(frozen=True, use_attribute_docstrings=True)

    budget_tokens: int = Field(4000, ge=64)
    """Token budget of one session's compacted context."""
    budget_messages: int | None = Field(None, ge=2)
    """Optional cap on the number of messages in the compacted context."""
    drop_headroom: float = Field(0.1, ge=0.0, le=0.5)
    """Share of the token budget a context is cut below once it outgrows the budget: the summary folds one
    span every few turns instead of one every turn, and the prompt's head (anchors, summary, facts) stays the
    same between cuts, which providers' prompt caches reward. 0 cuts only as far as the budget."""
    summary_max_tokens: int = Field(400, ge=16)
    """Cap on the rolling summary."""
    max_facts: int = Field(40, ge=1)
    """Cap on the key facts carried in the context."""
    max_content_bytes: int = Field(256 * 1024, ge=1)
    """Largest accepted turn value; bigger ones go to the dead-letter topic."""
    dedup_window: int = Field(256, ge=1)
    """How many recent turn ids per session are remembered to drop redeliveries."""
    session_ttl_seconds: int = Field(7 * 24 * 3600, ge=1)
    """Idle time after which a session's context expires from Redis and its state from the Table."""
    forget_marker_seconds: int = Field(30 * 24 * 3600, ge=1)
    """How long an erased session's forget marker drops its replayed or late turns; keep it above the turns topic's retention."""


class MemorySettings(BaseModel):
    """Settings of long-term memory, the archive, and the prompt a gateway reads."""

    model_config = ConfigDict(frozen=True, use_attribute_docstrings=True)

    prompt_budget_tokens: int = Field(6000, ge=64)
    """Token budget of a prompt from ContextClient.build_prompt (context + memory block + user message); never exceeded."""
    recall_budget_tokens: int = Field(3000, ge=0)
    """Tokens of a prompt's memory block (profile, memories, recalled turns); the context's oldest tail makes room for it."""
    recall_k: int = Field(3, ge=0)
    """Memories recalled per prompt by default."""
    recall_dedup_window: int = Field(12, ge=0)
    """A memory injected into a session is not injected again within this many prompts."""
    profile_write_chars: int = Field(2000, ge=100)
    """Sliding window of the cheap profile merge on the write path."""
    profile_read_chars: int = Field(500, ge=50)
    """Profile cut on the read path."""
    archive_max_entries: int = Field(10_000, ge=1)
    """Archived turns kept per memory owner for recall; the oldest go first."""
    memory_max_per_owner: int = Field(500, ge=1)
    """Long-term memories kept per owner; past it the fewest accessed, then the oldest, go (with their keyword index), a twentieth of it more than the excess at a time."""
    owner_ttl_seconds: int = Field(90 * 24 * 3600, ge=1)
    """Idle time after which an owner's archive, memories and profile expire from Redis."""


class EmbeddingSettings(BaseModel):
    """Settings of semantic recall's sentence embeddings."""

    model_config = ConfigDict(frozen=True, use_attribute_docstrings=True)

    embeddings: Literal["off", "local", "openai"] = "off"
    """Sentence embeddings for semantic recall: "off" (lexical recall only), "local" (ONNX models run in-process, from `make models`), "openai" (an OpenAI-compatible /v1/embeddings endpoint, for the worker only: a read never calls the network)."""
    embedding_model_dir: str | None = None
    """Folder of the local model for English and other spaced scripts (a manifest.json, the .onnx, its tokenizer); unset: the checkout's .models/all-minilm-l6-v2-q (`make models`)."""
    embedding_model_dir_zh: str | None = None
    """Folder of the local model for Chinese and Japanese text; unset: the checkout's .models/bge-small-zh-v15. The same folder as embedding_model_dir runs one model for every language."""
    embedding_threads: int = Field(1, ge=1, le=64)
    """ONNX Runtime's threads inside one model call (operators run one after another); ONNX Runtime's own default takes every core."""
    embedding_batch_size: int = Field(16, ge=1, le=2048)
    """Texts per model call or endpoint request; local texts are sorted by length first, so a batch pads little."""
    embedding_base_url: str | None = None
    """OpenAI-compatible endpoint of the "openai" embeddings; unset: openai_base_url. Its key is openai_api_key."""
    embedding_model: str = "text-embedding-3-small"
    """Model name sent to the embeddings endpoint."""
    embedding_dims: int | None = Field(None, ge=1, le=8192)
    """Length of the endpoint model's vectors (required with "openai"): a reply of another length is an error, not a silent mix."""
    embedding_timeout_seconds: float = Field(10.0, gt=0)
    """Timeout of one embeddings request."""
    embedding_max_retries: int = Field(2, ge=0)
    """Retries of a failed embeddings request, with exponential backoff."""
    embedding_expansion_terms: int = Field(16, ge=0, le=64)
    """Expansion terms an archived turn is indexed under: the vocabulary terms nearest it in the model's space (16 chosen on LoCoMo dev, where 4 to 32 came within a point or two: docs/decisions/0034)."""


class LLMSettings(BaseModel):
    """Settings of the OpenAI-compatible endpoint: summaries, key info, profiles."""

    model_config = ConfigDict(frozen=True, use_attribute_docstrings=True)

    openai_base_url: str | None = Field(
        None, validation_alias=AliasChoices("OPENAI_BASE_URL", "TURNSTREAM_OPENAI_BASE_URL")
    )
    """OpenAI-compatible endpoint; unset turns every LLM path off."""
    openai_api_key: SecretStr = Field(
        SecretStr("unused"), validation_alias=AliasChoices("OPENAI_API_KEY", "TURNSTREAM_OPENAI_API_KEY")
    )
    """API key sent to the endpoint (local servers usually ignore it)."""
    llm_model: str = "gpt-4o-mini"
    """Model name for summary merges and LLM key-info extraction."""
    llm_timeout_seconds: float = Field(20.0, gt=0)
    """Timeout of one LLM call; on expiry the offline result stands."""
    llm_max_retries: int = Field(2, ge=0)
    """Retries of a failed LLM call, with exponential backoff."""
    llm_concurrency: int = Field(4, ge=1)
    """Summary requests a worker has in flight at once (each a summary merge and, with llm_key_info, a key-info extraction sent beside it)."""
    llm_key_info: bool = True
    """With an endpoint: the summarizer also extracts key facts from each dropped span, merged over the offline facts by key; a fact naming an identifier or number its turns do not hold is discarded. false keeps the offline facts only."""

    llm_max_calls: int | None = Field(None, ge=0)
    """Summary requests the worker answers with the LLM at most (each a summary merge with its key-info extraction and profile merge), counted from its start; past it every request takes the offline path, as when the model fails. Unset: no cap (`turnstream shadow run --llm-max-calls`)."""

    @property
    def llm_enabled(self) -> bool:
        return bool(self.openai_base_url)


class ServeSettings(BaseModel):
    """Settings of the HTTP API, the MCP server and the inspector."""

    model_config = ConfigDict(frozen=True, use_attribute_docstrings=True)

    serve_bind: str = "127.0.0.1"
    """Address `turnstream serve` (the HTTP API) and `turnstream mcp --http` listen on; `--bind` overrides it."""
    serve_port: int = Field(8780, ge=0, lt=65536)
    """Port of `turnstream serve`; 0 picks a free one; `--port` overrides it."""
    serve_tokens_file: FilePath | None = None
    """File of the API's bearer tokens, one tenant each: JSON ({"TOKEN": "tenant", ...}) or lines "TOKEN tenant" (# comments); without it (or serve_tokens) the API refuses to start unless opened on loopback (`--open`)."""
    serve_tokens: SecretStr | None = None
    """The same tokens inline, "TOKEN=tenant,TOKEN=tenant" (for a secret injected as one variable); never printed."""
    serve_max_body_bytes: int = Field(1024 * 1024, ge=1024)
    """Largest request body the API reads; a bigger one gets 413."""
    serve_shutdown_seconds: float = Field(10.0, gt=0)
    """How long a stopping API (SIGTERM) lets requests in flight finish before it cancels them."""
    mcp_tenant: str | None = Field(None, pattern=r"^[A-Za-z0-9._-]{1,64}$")
    """The tenant `turnstream mcp` acts for over stdio (over HTTP each token names its own); unset: no tenant."""
    inspect_port: int = Field(8765, ge=0, lt=65536)
    """Port of `turnstream inspect`, the session inspector web page; 0 picks a free one."""
    inspect_token: SecretStr | None = None
    """Bearer token `turnstream inspect` asks of every request; required when it listens beyond loopback; never printed."""


class WorkerSettings(BaseModel):
    """Settings of the worker process: embedded services, start and stop, batches, live states, its web port, logs."""

    model_config = ConfigDict(frozen=True, use_attribute_docstrings=True)

    embedded: Literal["auto", "never"] = "auto"
    """"auto": an unset URL starts an embedded broker or Redis (development only); "never": an unset URL is an error."""
    kafka_jars: str | None = None
    """Folder of Apache Kafka's jars for `turnstream stack --broker kafka`; unset: the checkout's .kafka/lib (`make kafka`)."""
    data_dir: str = Field(default_factory=lambda: str(Path(tempfile.gettempdir()) / "turnstream-data"))
    """Where Faust keeps a worker's local files (one folder per app id): turnstream-data in the system's temporary folder (/tmp/turnstream-data on Linux), never the current directory (nor a folder named like the package, which Python started in the temporary folder would import instead of it)."""
    startup_timeout_seconds: float = Field(60.0, gt=0)
    """How long a starting worker waits for the broker and Redis to answer before it gives up."""
    stop_timeout_seconds: float = Field(30.0, gt=0)
    """How long a worker's graceful stop (SIGTERM) may take before it exits anyway, with status 3 (nothing is lost: uncommitted turns are applied again by the next owner); keep it below the supervisor's grace period."""
    resync_interval_seconds: int = Field(30, ge=0)
    """How often a worker writes back what Redis has lost (FLUSHALL, a restart without data, the newest writes of a primary that died before its replica had them): contexts from its Table, memories, profiles and the archive from the memory journal; 0 never."""
    batch_max_events: int = Field(256, ge=1, le=10_000)
    """Events the session agent takes at once: one Redis round trip and one Table row per session per batch."""
    max_turns_per_second: float | None = Field(None, gt=0)
    """Records the session agent takes per second at most (a token bucket before each batch), so that a replay leaves the broker and Redis to the live worker; unset: no limit (`turnstream shadow run --rate`)."""
    batch_max_ms: float = Field(5.0, gt=0, le=10_000)
    """How long the session agent keeps filling a batch while more events are waiting; a batch goes at once when none are."""
    live_states_max: int = Field(1_000, ge=0)
    """Session states a worker keeps live in memory across batches (the least recently used leave first), so a session's next batch need not restore its Table row; about 4 KiB each for a short session, 70 KiB for a long one at the default budget; 0 restores every session from its row in every batch."""
    live_states_idle_seconds: float = Field(600.0, ge=0)
    """A live session state unused for this long leaves memory (its session, when it comes back, is restored from its Table row); 0 no idle limit."""
    web_bind: str = "127.0.0.1"
    """Where a worker's Faust web server listens (never 0.0.0.0 by default)."""
    web_port: int = Field(0, ge=0, lt=65536)
    """Faust web port; 0 picks a free one so several workers share a host."""
    metrics_port: int | None = Field(None, ge=0, lt=65536)
    """Prometheus metrics port of the worker; unset disables the endpoint."""
    log_level: str = "WARNING"
    """Worker log level, any case (debug, info, warning, error, critical); `turnstream worker -l LEVEL` overrides it."""
    log_format: Literal["text", "json"] = "text"
    """Worker log lines: "text" (Faust's format) or "json" (one object per line on stderr, with session, turn_id, partition, offset, trace_id on lines about a turn)."""

    @field_validator("log_level")
    @classmethod
    def _check_log_level(cls, value: str) -> str:
        from turnstream.logs import parse_level

        return parse_level(value)

    @field_validator("log_format", mode="before")
    @classmethod
    def _lower_log_format(cls, value: object) -> object:
        return value.strip().lower() if isinstance(value, str) else value


GROUPS: tuple[type[BaseModel], ...] = (
    KafkaSettings,
    RedisSettings,
    CompactionSettings,
    MemorySettings,
    EmbeddingSettings,
    LLMSettings,
    ServeSettings,
    WorkerSettings,
)
"""The settings by concern, in the order docs/configuration.md lists them. A layer takes the group it needs (a
Settings is every group at once); what crosses groups is checked on Settings."""


class Settings(
    KafkaSettings,
    RedisSettings,
    CompactionSettings,
    MemorySettings,
    EmbeddingSettings,
    LLMSettings,
    ServeSettings,
    WorkerSettings,
    BaseSettings,
):
    """turnstream configuration; unset URLs mean "start the embedded service"."""

    model_config = SettingsConfigDict(
        env_prefix="TURNSTREAM_", frozen=True, extra="ignore", use_attribute_docstrings=True
    )

    @model_validator(mode="after")
    def _check_embeddings(self) -> Settings:
        if self.embeddings == "openai" and not (self.embedding_base_url or self.openai_base_url):
            raise ValueError("TURNSTREAM_EMBEDDINGS=openai needs TURNSTREAM_EMBEDDING_BASE_URL (or OPENAI_BASE_URL)")
        if self.embeddings == "openai" and self.embedding_dims is None:
            raise ValueError(
                "TURNSTREAM_EMBEDDINGS=openai needs TURNSTREAM_EMBEDDING_DIMS, the length of the model's vectors"
            )
        return self

    @model_validator(mode="after")
    def _check_static_membership(self) -> Settings:
        if self.group_instance_id and not self.web_port:
            # Faust gives a returning static member its old assignment, whose web URL must still be its own
            raise ValueError(
                "TURNSTREAM_GROUP_INSTANCE_ID needs a fixed TURNSTREAM_WEB_PORT (the same at every restart)"
            )
        return self

    def __repr_args__(self) -> Any:
        for name, value in super().__repr_args__():
            yield (
                name,
                mask_url(value) if isinstance(value, str) and name is not None and name.endswith("_url") else value,
            )

    def redacted(self) -> dict[str, Any]:
        """Every setting as JSON-ready values, secrets and URL passwords masked (for printing)."""
        values = self.model_dump(mode="json")
        for name, value in values.items():
            if isinstance(getattr(self, name), SecretStr):
                values[name] = MASK
            elif isinstance(value, str) and name.endswith("_url"):
                values[name] = mask_url(value)
        return values

    def redact(self, text: str) -> str:
        """`text` with URL passwords and the literal value of every secret setting masked."""
        text = mask_url(text)
        for name in type(self).model_fields:
            value = getattr(self, name)
            if isinstance(value, SecretStr) and len(secret := value.get_secret_value()) >= 3:
                text = text.replace(secret, MASK)
        return text
