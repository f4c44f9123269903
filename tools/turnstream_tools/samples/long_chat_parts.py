"""The parts a long chat is built from (pure data and small builders, from a seeded rng): the user's asks, and an
assistant answer's opening, sections and closing. A section is a heading, a short paragraph and one body: code
(Python, TypeScript, Go, bash, SQL, YAML, JSON), a stack trace (Python, Java, Go, Node), a markdown table, a
numbered plan, a checklist or a bullet list. All of it is about one topic of a project, whose identifiers,
settings, error and backend the code, traces and tables share; prose is in the chat's language
(samples/long_chats.py)."""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

from turnstream.text.language import Language

T = TypeVar("T")


@dataclass(frozen=True)
class Setting:
    """One setting of a topic: its name, default and sane range, and why (in each language)."""

    name: str
    default: int
    low: int
    high: int
    why_en: str
    why_zh: str

    def why(self, language: Language) -> str:
        return self.why_zh if language == "zh" else self.why_en


@dataclass(frozen=True)
class Topic:
    """What a stretch of the chat is about: its name in each language and what its code is made of."""

    en: str
    zh: str
    slug: str
    entity: str
    """The type the code passes around (`UploadJob`)."""
    verb: str
    """The function the answers keep fixing (`enqueue_upload`)."""
    call: str
    """The backend client's method the function calls."""
    error: str
    problem: str
    """The error's message; {n} is a small number, the same in every answer."""
    backend: str
    table: str
    columns: str
    """Three `name:sql_type` of the topic's table besides id, status and created_at."""
    options: str
    """What the options table compares."""
    settings: tuple[Setting, ...]

    def name(self, language: Language) -> str:
        return self.zh if language == "zh" else self.en

    def table_columns(self) -> list[tuple[str, str, str]]:
        """(name, SQL type, TypeScript type) of each column in `columns`."""
        pairs = [column.split(":") for column in self.columns.split()]
        return [(name, kind, "string" if kind in ("text", "timestamptz") else "number") for name, kind in pairs]


TOPICS = (
    Topic(
        en="retry backoff",
        zh="重试退避",
        slug="retry_backoff",
        entity="RetryPolicy",
        verb="call_with_backoff",
        call="post",
        error="RetryBudgetExceeded",
        problem="gave up after {n} attempts to payments-api",
        backend="payments-api",
        table="retry_attempts",
        columns="request_id:text attempt:integer status_code:integer",
        options="fixed_delay exponential full_jitter retry_budget",
        settings=(
            Setting(
                "max_attempts", 5, 1, 10, "bounds the extra load on a failing upstream", "限制故障时对上游的额外压力"
            ),
            Setting(
                "base_delay_ms", 100, 10, 1000, "the first wait; it doubles each attempt", "第一次等待，之后每次翻倍"
            ),
            Setting("max_delay_ms", 5000, 1000, 30000, "caps the doubling", "限制翻倍后的上限"),
            Setting("request_timeout_ms", 2000, 200, 10000, "one attempt's deadline", "单次请求的截止时间"),
        ),
    ),
    Topic(
        en="upload queue",
        zh="上传队列",
        slug="upload_queue",
        entity="UploadJob",
        verb="enqueue_upload",
        call="put_object",
        error="QueueFullError",
        problem="upload queue full: {n}000 jobs pending",
        backend="S3",
        table="upload_jobs",
        columns="object_key:text size_bytes:bigint attempts:integer",
        options="in_process sqs redis_streams postgres_skip_locked",
        settings=(
            Setting("max_pending", 5000, 100, 50000, "sheds load before memory runs out", "内存耗尽之前先拒绝新任务"),
            Setting("workers", 8, 1, 64, "S3 is the bottleneck, not the CPU", "瓶颈在 S3，不在 CPU"),
            Setting("chunk_size_mb", 8, 5, 64, "S3's multipart minimum is 5 MB", "S3 分片上传最小 5 MB"),
            Setting("visibility_timeout_s", 300, 30, 3600, "longer than the slowest upload", "要比最慢的一次上传更长"),
        ),
    ),
    Topic(
        en="schema migration",
        zh="数据库迁移",
        slug="schema_migration",
        entity="Migration",
        verb="apply_migration",
        call="execute",
        error="LockNotAvailable",
        problem="lock timeout on table orders after {n}s",
        backend="PostgreSQL",
        table="schema_migrations",
        columns="version:bigint name:text duration_ms:integer",
        options="single_transaction batched_backfill pg_repack expand_contract",
        settings=(
            Setting(
                "lock_timeout_ms",
                3000,
                500,
                10000,
                "fail fast instead of queueing behind a lock",
                "拿不到锁就快速失败，不要排队",
            ),
            Setting("statement_timeout_s", 60, 10, 600, "stops a runaway backfill", "防止回填失控"),
            Setting("batch_rows", 5000, 500, 50000, "keeps each transaction short", "让每个事务都很短"),
            Setting(
                "max_replica_lag_s", 10, 1, 60, "pauses the backfill when replicas fall behind", "副本落后时暂停回填"
            ),
        ),
    ),
    Topic(
        en="cache invalidation",
        zh="缓存失效",
        slug="cache_invalidation",
        entity="CacheEntry",
        verb="invalidate_keys",
        call="delete",
        error="StaleReadError",
        problem="served product:{n}842 stale after invalidate",
        backend="Redis",
        table="cache_invalidations",
        columns="cache_key:text version:bigint reason:text",
        options="ttl_only delete_on_write versioned_keys pubsub_broadcast",
        settings=(
            Setting(
                "ttl_seconds", 300, 30, 3600, "bounds how long a missed invalidation lives", "漏掉的失效最多存活这么久"
            ),
            Setting("max_keys_per_call", 500, 50, 5000, "one DEL must not block Redis", "单次 DEL 不能阻塞 Redis"),
            Setting("grace_ms", 200, 0, 2000, "covers the replicas' lag", "覆盖副本的延迟"),
            Setting(
                "stale_while_revalidate_s",
                30,
                0,
                300,
                "one request refreshes, the rest read the old value",
                "一个请求刷新，其余请求先读旧值",
            ),
        ),
    ),
    Topic(
        en="rate limiter",
        zh="限流器",
        slug="rate_limiter",
        entity="TokenBucket",
        verb="acquire_token",
        call="eval",
        error="RateLimitExceeded",
        problem="tenant acme over limit: {n}00 requests/min",
        backend="Redis",
        table="rate_limit_events",
        columns="tenant_id:text route:text remaining:integer",
        options="fixed_window sliding_log sliding_window token_bucket",
        settings=(
            Setting("requests_per_minute", 600, 60, 6000, "the limit in the contract", "合同里约定的上限"),
            Setting("burst", 50, 0, 500, "lets a page load its assets at once", "允许页面一次加载所有资源"),
            Setting("window_ms", 60000, 1000, 60000, "the sliding window's length", "滑动窗口的长度"),
            Setting("key_ttl_s", 120, 60, 600, "idle tenants free their keys", "空闲租户的键会自动释放"),
        ),
    ),
    Topic(
        en="auth tokens",
        zh="登录令牌",
        slug="auth_tokens",
        entity="AccessToken",
        verb="refresh_token",
        call="refresh",
        error="TokenExpiredError",
        problem="refresh token expired {n} minutes ago",
        backend="auth-service",
        table="refresh_tokens",
        columns="token_hash:text user_id:bigint expires_at:timestamptz",
        options="opaque_tokens jwt_short_lived jwt_with_denylist session_cookie",
        settings=(
            Setting("access_ttl_s", 900, 60, 3600, "short enough that revocation matters", "足够短，吊销才有意义"),
            Setting("refresh_ttl_days", 30, 1, 90, "how long a device stays signed in", "设备保持登录的时长"),
            Setting("clock_skew_s", 60, 0, 300, "servers' clocks drift", "服务器的时钟会漂移"),
            Setting("max_sessions", 5, 1, 20, "per user; the oldest is revoked first", "每个用户的上限，最旧的先吊销"),
        ),
    ),
    Topic(
        en="search index",
        zh="搜索索引",
        slug="search_index",
        entity="SearchDocument",
        verb="reindex_documents",
        call="bulk",
        error="BulkIndexError",
        problem="{n} of 500 docs failed: mapper_parsing_exception",
        backend="OpenSearch",
        table="search_outbox",
        columns="doc_id:text index_name:text op:text",
        options="dual_write outbox_table cdc_debezium nightly_rebuild",
        settings=(
            Setting("bulk_size", 500, 50, 5000, "about 5 MB a request", "每个请求大约 5 MB"),
            Setting("refresh_interval_s", 30, 1, 120, "fewer segments during a reindex", "重建索引时减少分段"),
            Setting("replicas", 1, 0, 3, "0 during the bulk load, 1 after", "批量导入时为 0，之后改回 1"),
            Setting("max_retries", 3, 0, 10, "429s are normal under load", "高负载下 429 很常见"),
        ),
    ),
    Topic(
        en="billing export",
        zh="账单导出",
        slug="billing_export",
        entity="InvoiceRow",
        verb="export_invoices",
        call="write_rows",
        error="ExportMismatchError",
        problem="totals differ by {n} cents for 2023-05",
        backend="BigQuery",
        table="invoice_exports",
        columns="invoice_id:text customer_id:bigint amount_cents:bigint",
        options="nightly_csv streaming_insert cdc_to_warehouse api_pull",
        settings=(
            Setting("page_size", 1000, 100, 10000, "the API's largest page", "API 单页的最大值"),
            Setting(
                "max_rows_per_file", 500000, 10000, 1000000, "keeps each CSV under 100 MB", "每个 CSV 不超过 100 MB"
            ),
            Setting("timeout_s", 120, 30, 900, "the month-end export is the slow one", "月底那次导出最慢"),
            Setting(
                "retention_days", 400, 30, 2555, "finance needs last year and a month", "财务需要去年再加一个月的数据"
            ),
        ),
    ),
    Topic(
        en="image resizer",
        zh="图片压缩",
        slug="image_resizer",
        entity="ResizeJob",
        verb="resize_image",
        call="resize",
        error="ImageTooLargeError",
        problem="input is {n}000x9000 px, limit is 8192",
        backend="libvips",
        table="image_variants",
        columns="image_id:text width:integer bytes:integer",
        options="pillow libvips imgproxy cdn_transform",
        settings=(
            Setting("max_width_px", 2048, 256, 8192, "the widest slot on the site", "网站上最宽的位置"),
            Setting("jpeg_quality", 82, 60, 95, "no visible loss, half the bytes", "看不出损失，体积减半"),
            Setting("max_input_mb", 25, 5, 100, "rejects camera RAW files early", "尽早拒绝相机原图"),
            Setting("workers", 4, 1, 16, "libvips already runs threads of its own", "libvips 本身就是多线程"),
        ),
    ),
    Topic(
        en="webhook signer",
        zh="回调签名",
        slug="webhook_signer",
        entity="WebhookEvent",
        verb="sign_payload",
        call="post",
        error="SignatureMismatch",
        problem="timestamp {n}00 s outside the tolerance",
        backend="HMAC-SHA256",
        table="webhook_deliveries",
        columns="event_id:text endpoint_url:text status_code:integer",
        options="hmac_sha256 hmac_with_timestamp ed25519 mtls",
        settings=(
            Setting("tolerance_s", 300, 30, 900, "stops replays, allows some clock drift", "防止重放，也容忍时钟偏差"),
            Setting("max_body_kb", 256, 16, 1024, "larger events are sent by reference", "更大的事件只传引用"),
            Setting("retry_limit", 8, 1, 20, "about a day with the backoff", "加上退避大约一天"),
            Setting("delivery_timeout_ms", 10000, 1000, 30000, "receivers must answer fast", "接收方必须快速响应"),
        ),
    ),
    Topic(
        en="feature flags",
        zh="功能开关",
        slug="feature_flags",
        entity="FlagRule",
        verb="evaluate_flag",
        call="fetch_snapshot",
        error="FlagNotFound",
        problem="new_checkout missing from snapshot v{n}",
        backend="flag-service",
        table="flag_evaluations",
        columns="flag_key:text user_id:bigint variant:text",
        options="env_vars config_file flag_service database_table",
        settings=(
            Setting("refresh_interval_s", 30, 5, 300, "how fast a kill switch acts", "紧急关闭生效的速度"),
            Setting("rollout_percent", 10, 0, 100, "start small and watch the errors", "从小比例开始，盯着错误"),
            Setting("stale_after_s", 300, 60, 3600, "after this, fall back to the defaults", "超过这个时间就用默认值"),
            Setting("max_rules", 200, 10, 1000, "keeps an evaluation under a millisecond", "评估保持在一毫秒以内"),
        ),
    ),
    Topic(
        en="log shipping",
        zh="日志收集",
        slug="log_shipping",
        entity="LogBatch",
        verb="ship_logs",
        call="push",
        error="BackpressureError",
        problem="buffer full, dropped {n}412 lines",
        backend="Loki",
        table="log_drops",
        columns="host:text stream:text dropped_lines:integer",
        options="fluent_bit vector promtail otel_collector",
        settings=(
            Setting("buffer_mb", 64, 8, 512, "rides out a five-minute outage", "能扛住五分钟的中断"),
            Setting(
                "flush_interval_ms",
                1000,
                100,
                10000,
                "latency against the number of requests",
                "延迟和请求数之间的权衡",
            ),
            Setting("batch_lines", 5000, 500, 50000, "Loki's push limit is 4 MB", "Loki 单次推送上限 4 MB"),
            Setting(
                "max_line_kb", 16, 1, 256, "truncates long traces instead of dropping lines", "截断长堆栈，而不是丢行"
            ),
        ),
    ),
)

WHEN: dict[Language, tuple[str, ...]] = {
    "en": ("yesterday", "last week", "on Monday", "this morning", "two days ago"),
    "zh": ("昨天", "上周", "周一", "今天上午", "前天"),
}


def camel(name: str) -> str:
    first, *rest = name.split("_")
    return first + "".join(part.title() for part in rest)


def pascal(name: str) -> str:
    return "".join(part.title() for part in name.split("_"))


def value(rng: random.Random, setting: Setting) -> int:
    """A value someone might run `setting` with: its default, half or twice it, or an end of its range."""
    candidates = [setting.default, setting.default // 2, setting.default * 2, setting.low, setting.high]
    return rng.choice([v for v in candidates if setting.low <= v <= setting.high])


def snake(name: str) -> str:
    return "".join(f"_{c.lower()}" if c.isupper() and i else c.lower() for i, c in enumerate(name))


def values(rng: random.Random, language: Language, topic: Topic) -> dict[str, object]:
    """What one answer's templates are filled with: the topic's names, three of its settings, some numbers."""
    s1, s2, s3 = rng.sample(topic.settings, 3)
    c1, c2, c3 = topic.table_columns()
    width = max(len(pascal(s1.name)), len(pascal(s2.name)))  # gofmt aligns a struct's fields
    return {
        "topic": topic.name(language),
        "slug": topic.slug,
        "SLUG": topic.slug.upper(),
        "dash": topic.slug.replace("_", "-"),
        "pkg": topic.slug.replace("_", ""),
        "entity": topic.entity,
        "verb": topic.verb,
        "verb_camel": camel(topic.verb),
        "verb_pascal": pascal(topic.verb),
        "call": topic.call,
        "call_pascal": pascal(topic.call),
        "error": topic.error,
        "error_snake": snake(topic.error),
        "problem": topic.problem.format(n=3 + len(topic.slug) % 7),  # one error a topic, as the user pastes it
        "backend": topic.backend,
        "table": topic.table,
        "when": rng.choice(WHEN[language]),
        **{f"s{i}": s.name for i, s in enumerate((s1, s2, s3), 1)},
        **{f"S{i}": s.name.upper() for i, s in enumerate((s1, s2, s3), 1)},
        **{f"s{i}_camel": camel(s.name) for i, s in enumerate((s1, s2, s3), 1)},
        **{f"s{i}_pascal": pascal(s.name) for i, s in enumerate((s1, s2, s3), 1)},
        **{f"s{i}_field": pascal(s.name).ljust(width) for i, s in enumerate((s1, s2), 1)},
        **{f"d{i}": s.default for i, s in enumerate((s1, s2, s3), 1)},
        **{f"v{i}": value(rng, s) for i, s in enumerate((s1, s2, s3), 1)},
        "l1": s1.low,
        "h1": s1.high,
        "below": s1.low - 1,
        "above": s1.high + 1,
        "why1": s1.why(language),
        **{f"c{i}": c[0] for i, c in enumerate((c1, c2, c3), 1)},
        **{f"c{i}_camel": camel(c[0]) for i, c in enumerate((c1, c2, c3), 1)},
        **{f"t{i}": c[2] for i, c in enumerate((c1, c2, c3), 1)},
        **{f"t{i}sql": c[1] for i, c in enumerate((c1, c2, c3), 1)},
        "attempts": rng.choice((3, 4, 5, 6)),
        "timeout_s": rng.choice((2, 5, 10, 30)),
        "cap_s": rng.choice((5, 10, 30)),
        "backoff_ms": rng.choice((100, 200, 250, 500)),
        "batch": rng.choice((16, 32, 50, 100, 200)),
        "stale_ms": rng.choice((30_000, 60_000, 120_000, 300_000)),
        "rps": rng.choice((40, 120, 300, 800, 1500)),
        "days": rng.choice((1, 2, 7)),
        "replicas": rng.choice((2, 3, 4, 6)),
        "version": f"1.{rng.randint(4, 19)}.{rng.randint(0, 9)}",
        **{f"k_{key}": text for key, text in COMMENTS[language].items()},
    }


def noise(rng: random.Random, topic: Topic) -> dict[str, object]:
    """A section's own line numbers and ids: two traces in one answer are not the same paste."""
    return {
        **{f"L{i}": rng.randint(12, 480) for i in range(1, 4)},
        "col": rng.randint(5, 40),
        "goroutine": rng.choice((1, 17, 23, 41, 118)),
        "sample_id": f"{topic.slug[:3]}_{rng.randrange(16**8):08x}",
        "request_id": f"req_{rng.randrange(16**12):012x}",
    }


def fill(template: str, slots: dict[str, object]) -> str:
    return template.format(**slots)


# Comments in the code follow the chat's language, as people write them.
COMMENTS: dict[Language, dict[str, str]] = {
    "en": {
        "transient": "only timeouts and dropped connections are worth another try",
        "cap": "cap the wait so one bad call cannot stall the worker",
        "requeue": "put the batch back; the next round retries it",
        "env": "defaults first, then whatever the environment overrides",
        "stale": "a job that has run this long has lost its worker",
        "sql": "failures per hour since the deploy",
        "config": "raised after the incident, see the runbook",
        "validate": "fail at start-up, not on the first request",
    },
    "zh": {
        "transient": "只有超时和断连值得重试",
        "cap": "限制等待时间，避免一次失败的调用卡住整个 worker",
        "requeue": "整批放回队列，下一轮再重试",
        "env": "先用默认值，再用环境变量覆盖",
        "stale": "运行这么久的任务说明 worker 已经挂了",
        "sql": "上线以来每小时的失败数",
        "config": "事故之后调大的，见运维手册",
        "validate": "启动时就报错，而不是等到第一个请求",
    },
}

# The code and traces, as the answers show them: str.format templates ({{ }} is a brace of the code's own).
PY_RETRY = """\
import logging
import random
import time

from {slug}.client import {entity}Client
from {slug}.errors import {error}

log = logging.getLogger(__name__)
TRANSIENT = (TimeoutError, ConnectionError)  # {k_transient}


def {verb}(
    client: {entity}Client, payload: dict[str, object], *, max_attempts: int = {attempts}
) -> dict[str, object]:
    for attempt in range(1, max_attempts + 1):
        try:
            return client.{call}(payload, timeout={timeout_s})
        except TRANSIENT as exc:
            if attempt == max_attempts:
                raise {error}(f"{verb} failed after {{attempt}} attempts") from exc
            # {k_cap}
            delay = min({cap_s}, 0.1 * 2**attempt) * random.uniform(0.5, 1.0)
            log.warning("{verb}: attempt %d failed (%s), retrying in %.1fs", attempt, exc, delay)
            time.sleep(delay)
    raise AssertionError("unreachable")
"""
PY_SETTINGS = """\
import os
from dataclasses import dataclass, fields


@dataclass(frozen=True)
class {entity}Settings:
    {s1}: int = {d1}
    {s2}: int = {d2}
    {s3}: int = {d3}

    @classmethod
    def from_env(cls, prefix: str = "{SLUG}_") -> "{entity}Settings":
        # {k_env}
        names = {{f.name: prefix + f.name.upper() for f in fields(cls)}}
        return cls(**{{name: int(os.environ[var]) for name, var in names.items() if var in os.environ}})

    def validate(self) -> None:
        # {k_validate}
        if not {l1} <= self.{s1} <= {h1}:
            raise ValueError(f"{s1}={{self.{s1}}} is outside {l1}..{h1}")
        if self.{s2} <= 0:
            raise ValueError("{s2} must be positive")
"""
PY_WORKER = """\
import asyncio
import logging

from {slug}.core import {verb}
from {slug}.errors import {error}
from {slug}.models import {entity}

log = logging.getLogger("{slug}.worker")


async def run_worker(queue: "asyncio.Queue[{entity}]", *, batch_size: int = {batch}) -> None:
    while True:
        batch = [await queue.get()]
        while len(batch) < batch_size and not queue.empty():
            batch.append(queue.get_nowait())
        try:
            await {verb}(batch)
        except {error}:
            # {k_requeue}
            log.exception("{verb} failed for %d items", len(batch))
            for item in batch:
                queue.put_nowait(item)
            await asyncio.sleep({timeout_s})
        finally:
            for _ in batch:
                queue.task_done()
"""
PY_TEST = """\
import pytest

from {slug}.core import {entity}Settings, {verb}
from {slug}.errors import {error}


@pytest.mark.parametrize("value", [{below}, {above}])
def test_{s1}_out_of_range_is_rejected(value: int) -> None:
    with pytest.raises(ValueError, match="{s1}"):
        {entity}Settings({s1}=value).validate()


def test_{verb}_does_not_retry_{error_snake}(fake_client) -> None:
    fake_client.fail_with({error}("{problem}"))
    with pytest.raises({error}):
        {verb}(fake_client, {{"id": "{sample_id}"}})
    assert fake_client.calls == 1
"""
TS_FETCH = """\
import {{ setTimeout as sleep }} from "node:timers/promises";

export interface {entity}Options {{
  baseUrl: string;
  {s1_camel}: number;
  {s2_camel}: number;
}}

export class {error} extends Error {{}}

export async function {verb_camel}(body: unknown, opts: {entity}Options): Promise<Response> {{
  for (let attempt = 1; ; attempt++) {{
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), {timeout_s}_000);
    try {{
      const res = await fetch(`${{opts.baseUrl}}/v1/{dash}`, {{
        method: "POST",
        headers: {{ "content-type": "application/json" }},
        body: JSON.stringify(body),
        signal: controller.signal,
      }});
      if (res.status < 500) return res;
      if (attempt >= {attempts}) throw new {error}(`{verb_camel} failed: HTTP ${{res.status}}`);
    }} finally {{
      clearTimeout(timer);
    }}
    // {k_cap}
    await sleep(Math.min(2 ** attempt * {backoff_ms}, {cap_s}_000));
  }}
}}
"""
TS_TYPES = """\
export type {entity}Status = "queued" | "running" | "done" | "failed";

export interface {entity} {{
  id: string;
  {c1_camel}: {t1};
  {c2_camel}: {t2};
  {c3_camel}: {t3};
  status: {entity}Status;
  updatedAt: string;
}}

const STALE_AFTER_MS = {stale_ms};

export function needsAttention(items: {entity}[], now: number = Date.now()): {entity}[] {{
  // {k_stale}
  return items.filter(
    (item) =>
      item.status === "failed" || (item.status === "running" && now - Date.parse(item.updatedAt) > STALE_AFTER_MS),
  );
}}

export function countByStatus(items: {entity}[]): Record<{entity}Status, number> {{
  const counts: Record<{entity}Status, number> = {{ queued: 0, running: 0, done: 0, failed: 0 }};
  for (const item of items) counts[item.status] += 1;
  return counts;
}}
"""
TS_TEST = """\
import {{ describe, expect, it, vi }} from "vitest";
import {{ {verb_camel}, {error} }} from "./{dash}";

describe("{verb_camel}", () => {{
  it("gives up after {attempts} attempts on 5xx", async () => {{
    const fetch = vi.fn().mockResolvedValue(new Response("", {{ status: 503 }}));
    vi.stubGlobal("fetch", fetch);
    const opts = {{ baseUrl: "http://test", {s1_camel}: {d1}, {s2_camel}: {d2} }};
    await expect({verb_camel}({{ id: "{sample_id}" }}, opts)).rejects.toThrow({error});
    expect(fetch).toHaveBeenCalledTimes({attempts});
  }});
}});
"""
GO_CONFIG = """\
package {pkg}

import (
\t"fmt"
\t"os"
\t"strconv"
)

type Config struct {{
\t{s1_field} int `yaml:"{s1}"`
\t{s2_field} int `yaml:"{s2}"`
}}

// FromEnv reads the config. {k_env}
func FromEnv() (Config, error) {{
\tcfg := Config{{{s1_pascal}: {d1}, {s2_pascal}: {d2}}}
\tif v, ok := os.LookupEnv("{S1}"); ok {{
\t\tn, err := strconv.Atoi(v)
\t\tif err != nil {{
\t\t\treturn cfg, fmt.Errorf("{S1}: %w", err)
\t\t}}
\t\tcfg.{s1_pascal} = n
\t}}
\tif cfg.{s1_pascal} < {l1} || cfg.{s1_pascal} > {h1} {{
\t\treturn cfg, fmt.Errorf("{s1} = %d, want {l1}..{h1}", cfg.{s1_pascal})
\t}}
\treturn cfg, nil
}}
"""
GO_RETRY = """\
package {pkg}

import (
\t"context"
\t"errors"
\t"fmt"
\t"log/slog"
\t"time"
)

var Err{error} = errors.New("{dash}: {problem}")

func (w *Worker) {verb_pascal}(ctx context.Context, batch []{entity}) error {{
\tfor attempt := 1; attempt <= {attempts}; attempt++ {{
\t\tctx, cancel := context.WithTimeout(ctx, {timeout_s}*time.Second)
\t\terr := w.client.{call_pascal}(ctx, batch)
\t\tcancel()
\t\tif err == nil {{
\t\t\treturn nil
\t\t}}
\t\tif !errors.Is(err, context.DeadlineExceeded) {{
\t\t\treturn fmt.Errorf("{verb}: %w", err)
\t\t}}
\t\tslog.Warn("{verb} timed out", "attempt", attempt, "items", len(batch))
\t\ttime.Sleep(time.Duration(attempt) * {backoff_ms} * time.Millisecond)
\t}}
\treturn Err{error}
}}
"""
YAML_DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {dash}
  namespace: prod
spec:
  replicas: {replicas}
  template:
    spec:
      containers:
        - name: {dash}
          image: registry.example.com/{dash}:{version}
          env:
            - name: {S1}
              value: "{v1}"  # {k_config}
            - name: {S2}
              value: "{v2}"
          resources:
            requests:
              cpu: 250m
              memory: 256Mi
            limits:
              memory: 512Mi
"""
YAML_APP = """\
{slug}:
  {s1}: {v1}  # {k_config}
  {s2}: {v2}
  {s3}: {d3}
  backend: {backend}
  alerts:
    - name: {error}
      expr: rate({slug}_errors_total[5m]) > 0.01
      for: 10m
"""
JSON_CONFIG = """\
{{
  "{slug}": {{
    "{s1}": {v1},
    "{s2}": {v2},
    "{s3}": {d3},
    "backend": "{backend}",
    "dry_run": false
  }}
}}
"""
JSON_ERROR = """\
{{
  "error": {{
    "type": "{error}",
    "message": "{problem}",
    "request_id": "{request_id}",
    "retryable": false
  }}
}}
"""
BASH_KUBECTL = """\
#!/usr/bin/env bash
set -euo pipefail

kubectl -n prod set env deploy/{dash} {S1}={v1}
kubectl -n prod rollout status deploy/{dash} --timeout=180s
# {k_config}
kubectl -n prod logs -l app={dash} --since=30m | grep -c "{error}" || true
"""
BASH_CURL = """\
curl -sS -X POST "https://api.example.com/v1/{dash}" \\
  -H "Authorization: Bearer $TOKEN" \\
  -H "Content-Type: application/json" \\
  -d '{{"{s1}": {v1}, "dry_run": true}}' \\
  | jq '.errors[]? | {{code, message}}'
"""
BASH_PSQL = """\
psql "$DATABASE_URL" -v ON_ERROR_STOP=1 <<'SQL'
SELECT status, count(*) FROM {table}
WHERE created_at > now() - interval '{days} days'
GROUP BY status;
SQL
redis-cli --scan --pattern '{slug}:*' | head -n {batch}
"""
SQL_FAILURES = """\
-- {k_sql}
SELECT date_trunc('hour', created_at) AS hour,
       count(*) FILTER (WHERE status = 'failed') AS failed,
       count(*) AS total,
       round(100.0 * count(*) FILTER (WHERE status = 'failed') / count(*), 2) AS failed_pct
FROM {table}
WHERE created_at > now() - interval '{days} days'
GROUP BY 1
ORDER BY 1 DESC
LIMIT 24;
"""
SQL_TABLE = """\
CREATE TABLE {table} (
    id          bigserial PRIMARY KEY,
    {c1:<11} {t1sql} NOT NULL,
    {c2:<11} {t2sql} NOT NULL,
    {c3:<11} {t3sql},
    status      text NOT NULL DEFAULT 'queued',
    created_at  timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX CONCURRENTLY {table}_pending_idx ON {table} (created_at) WHERE status <> 'done';
"""
CODE: dict[str, tuple[tuple[str, str], ...]] = {
    # what each kind of section shows, in the language of its fence
    "fix": (
        ("python", PY_RETRY),
        ("python", PY_SETTINGS),
        ("python", PY_WORKER),
        ("typescript", TS_FETCH),
        ("typescript", TS_TYPES),
        ("go", GO_CONFIG),
        ("go", GO_RETRY),
    ),
    "test": (("python", PY_TEST), ("typescript", TS_TEST)),
    "config": (("yaml", YAML_DEPLOYMENT), ("yaml", YAML_APP), ("json", JSON_CONFIG)),
    "ops": (("bash", BASH_KUBECTL), ("bash", BASH_CURL), ("bash", BASH_PSQL)),
    "query": (("sql", SQL_FAILURES), ("sql", SQL_TABLE)),
    "response": (("json", JSON_ERROR),),
}
TRACES: tuple[str, ...] = (
    """\
Traceback (most recent call last):
  File "/srv/{dash}/app/worker.py", line {L1}, in handle
    result = {verb}(client, payload)
  File "/srv/{dash}/app/core.py", line {L2}, in {verb}
    return client.{call}(payload, timeout={timeout_s})
  File "/srv/{dash}/app/client.py", line {L3}, in {call}
    raise {error}(body["message"])
{slug}.errors.{error}: {problem}
""",
    """\
Traceback (most recent call last):
  File "/usr/lib/python3.11/site-packages/httpx/_transports/default.py", line 69, in map_httpcore_exceptions
    yield
httpx.ReadTimeout: timed out

The above exception was the direct cause of the following exception:

Traceback (most recent call last):
  File "/srv/{dash}/app/core.py", line {L2}, in {verb}
    response = client.{call}(payload, timeout={timeout_s})
  File "/srv/{dash}/app/core.py", line {L3}, in {verb}
    raise {error}("{problem}") from exc
{slug}.errors.{error}: {problem}
""",
    """\
Exception in thread "{dash}-worker-3" com.acme.{pkg}.{error}: {problem}
\tat com.acme.{pkg}.{entity}Service.{verb_camel}({entity}Service.java:{L1})
\tat com.acme.{pkg}.{entity}Controller.handle({entity}Controller.java:{L2})
\tat org.springframework.web.servlet.FrameworkServlet.service(FrameworkServlet.java:897)
\tat java.base/java.util.concurrent.ThreadPoolExecutor.runWorker(ThreadPoolExecutor.java:1136)
\tat java.base/java.lang.Thread.run(Thread.java:833)
Caused by: java.net.SocketTimeoutException: Read timed out
\tat java.base/sun.nio.ch.NioSocketImpl.timedRead(NioSocketImpl.java:288)
\t... 4 more
""",
    """\
panic: {dash}: {problem}

goroutine {goroutine} [running]:
main.(*Worker).{verb_pascal}(0xc0001a2000, {{0x10f4e60, 0xc000124000}})
\t/src/{dash}/worker.go:{L1} +0x1c5
main.(*Worker).run(0xc0001a2000)
\t/src/{dash}/worker.go:{L2} +0x8f
created by main.main in goroutine 1
\t/src/{dash}/main.go:{L3} +0x2b
exit status 2
""",
    """\
{error}: {problem}
    at {verb_camel} (/app/src/{dash}/client.ts:{L1}:{col})
    at async processBatch (/app/src/{dash}/worker.ts:{L2}:{col})
    at async Promise.all (index 0)
    at async main (/app/src/{dash}/main.ts:{L3}:3)
""",
)

USER: dict[Language, tuple[tuple[str, str], ...]] = {
    # (the kind of answer it gets, the message); a pasted error line or config snippet now and then
    "en": (
        ("howto", "How should I set up the {topic}?"),
        ("howto", "Can you show me the {topic} with {s1}?"),
        ("debug", "Yesterday the {topic} broke again, any idea why?"),
        ("debug", "This morning I tried your {topic} code, it fails on {s1}."),
        ("debug", "Getting `{error}: {problem}` from the {topic}, what now?"),
        ("debug", "Our {topic} calls keep timing out against {backend}; it started {when}."),
        ("ship", "Next week we ship the {topic}. What should I check?"),
        ("ship", "Can you review the rollout plan for the {topic}?"),
        ("tune", "Thanks. And what about {s1} for the {topic}?"),
        ("tune", "Is `{s1}: {v1}` too high for the {topic}?"),
        ("tune", "Which option would you pick for the {topic}?"),
        ("tune", "Our {topic} config:\n```yaml\n{s1}: {v1}\n{s2}: {v2}\n```\nAnything off?"),
    ),
    "zh": (
        ("howto", "{topic}应该怎么配置？"),
        ("howto", "能给我看一下带{s1}的{topic}吗？"),
        ("debug", "昨天{topic}又出问题了，知道为什么吗？"),
        ("debug", "今天上午试了你的{topic}代码，{s1}报错了。"),
        ("debug", "{topic}报错：`{error}: {problem}`，怎么办？"),
        ("debug", "从{when}开始{topic}访问{backend}一直超时。"),
        ("ship", "下周要上线{topic}，需要检查什么？"),
        ("ship", "能帮我看看{topic}的上线计划吗？"),
        ("tune", "谢谢。那{topic}的{s1}呢？"),
        ("tune", "{topic}的 `{s1}: {v1}` 是不是太大了？"),
        ("tune", "{topic}你会选哪个方案？"),
        ("tune", "我们{topic}的配置：\n```yaml\n{s1}: {v1}\n{s2}: {v2}\n```\n有问题吗？"),
    ),
}
QUESTIONS = (0, 1, 2, 6, 8, 10)
"""The asks that make a question against the archive: plainly in the chat's language, no pasted text."""

OPENINGS: dict[Language, dict[str, tuple[str, ...]]] = {
    "en": {
        "debug": (
            "Short version: this is {backend}, not the {topic} code itself, but our code makes it worse.",
            "I think I know what happened {when}. The {error} is the symptom; the cause is upstream of it.",
            "That error is misleading. `{verb}` raises {error} for two different reasons, and only one is ours.",
        ),
        "howto": (
            "Here is how I would set up the {topic}, starting from what we already have.",
            "Sure. I will keep it close to the code we wrote {when} and only change what is needed.",
            "Setting up the {topic} is simpler than it looks if you keep the settings in one place.",
        ),
        "ship": (
            "Good timing. Most of the risk in the {topic} is in the rollout, not in the code.",
            "Here is what I would check before the {topic} change goes out, roughly in order.",
        ),
        "tune": (
            "It depends on the traffic, but `{s1}` at {v1} is a reasonable place to start.",
            "The answer for `{s1}` depends on {backend} more than on our code.",
            "I compared the options {when}; here is what I found.",
        ),
    },
    "zh": {
        "debug": (
            "简单说：问题在{backend}，不在{topic}本身，但{topic}把它放大了。",
            "我大概知道{when}发生了什么。{error}只是表象，原因在上游。",
            "这个报错有误导性：`{verb}`会因为两种原因抛出{error}，只有一种是我们的问题。",
        ),
        "howto": (
            "下面是我会怎么配置{topic}，基于我们现有的代码。",
            "可以。我尽量沿用{when}写的代码，只改必要的部分。",
            "只要把配置集中在一个地方，{topic}其实比看起来简单。",
        ),
        "ship": (
            "时机正好。{topic}的风险主要在上线过程，而不是代码本身。",
            "上线{topic}之前，我会按下面的顺序检查。",
        ),
        "tune": (
            "要看流量，不过`{s1}`设成{v1}是个合理的起点。",
            "`{s1}`该设多少，更多取决于{backend}，而不是我们的代码。",
            "我{when}对比过几种方案，结论如下。",
        ),
    },
}
CLOSINGS: dict[Language, tuple[str, ...]] = {
    "en": (
        "If it still fails, paste the full trace and the value of `{s1}` you run with.",
        "Let me know what the graphs show after the deploy.",
        "Happy to look at the diff once you have it.",
    ),
    "zh": (
        "如果还是失败，把完整的堆栈和你用的`{s1}`贴过来。",
        "上线之后告诉我监控上的变化。",
        "改完之后可以把 diff 发我看看。",
    ),
}
PROSE: dict[Language, tuple[str, ...]] = {
    "en": (
        "The {topic} code should read `{s1}` from its settings rather than a constant, so a deploy can change it.",
        "As we discussed {when}, keep `{verb}` idempotent: a retried call must not apply twice.",
        "{d1} is a sane default for `{s1}`; measure before you raise it.",
        "Most {topic} incidents start at {backend}, so look there first.",
        "This keeps the request path small and moves the slow part of the {topic} behind a queue.",
        "Log `{s1}` and the request id with every {error}, or the failures will be impossible to tell apart.",
        "With {rps} requests a second and `{s1}` at {v1}, the {topic} work stays well inside its budget.",
        "Do not share one {backend} client between threads here; it keeps per-connection state.",
        "Roll it out behind a flag first, then change `{s1}` step by step while you watch the error rate.",
        "Old clients need no change; they keep the default of {d1}.",
        "The numbers from {when} are from one region only, so treat them as a lower bound.",
        "If {backend} is down, `{verb}` should fail fast with {error} instead of hanging.",
        "Keep the change small: one setting, one deploy, then look at the graphs.",
        "I would not go past {h1} for `{s1}`; beyond that a higher value only moves the problem to {backend}.",
        "What `{s1}` is for: {why1}. That is why it matters more than `{s2}` here.",
        "Keep the {backend} timeout below the caller's own, or retries pile up behind each other.",
        "I checked the dashboards from {when}: the errors line up with deploys, not with traffic.",
        "`{s2}` can stay at its default of {d2} for now; it is not what is failing.",
        "Write the value down in the runbook next to the reason, so nobody lowers it again by accident.",
        "A metric per outcome (ok, retried, failed) makes the next incident a five-minute one.",
        "If the queue in front of `{verb}` grows, the fix is more workers, not a longer timeout.",
        "Test it against a real {backend} in CI; the mock hides exactly this kind of failure.",
        "This is cheap to undo: the old value is one environment variable away.",
        "The error rate is the number to watch; latency will look fine until it suddenly does not.",
    ),
    "zh": (
        "{topic}应该从配置里读取`{s1}`，而不是写死常量，这样部署时可以调整。",
        "就像{when}说的，`{verb}`要保持幂等：重试的调用不能生效两次。",
        "`{s1}`默认{d1}是合理的，调大之前先测一下。",
        "大多数{topic}的事故都从{backend}开始，先查那里。",
        "这样请求路径保持精简，把{topic}里慢的部分放到队列后面。",
        "每次出现{error}都要记录`{s1}`和请求 ID，否则各种失败根本分不清。",
        "每秒{rps}个请求、`{s1}`为{v1}时，{topic}完全在预算之内。",
        "这里不要在线程之间共用一个{backend}客户端，它保存了每个连接的状态。",
        "先用开关灰度上线，再一步步调整`{s1}`，同时盯着错误率。",
        "老的客户端不需要改，它们继续用默认值{d1}。",
        "{when}的数据只来自一个区域，只能当作下限。",
        "如果{backend}挂了，`{verb}`应该直接抛出{error}快速失败，而不是一直等待。",
        "改动要小：一次只改一个配置、部署一次，然后看监控。",
        "`{s1}`我不会超过{h1}，再大只会把问题转移到{backend}。",
        "`{s1}`：{why1}。所以这里它比`{s2}`更重要。",
        "{backend}的超时要比调用方自己的短，否则重试会一个接一个堆起来。",
        "我看了{when}的监控：错误和部署时间对得上，和流量无关。",
        "`{s2}`暂时保持默认值{d2}就行，出问题的不是它。",
        "把这个值和原因一起写进运维手册，免得以后有人又把它改小。",
        "按结果（成功、重试、失败）分别打指标，下次事故五分钟就能定位。",
        "如果`{verb}`前面的队列越积越长，要加的是 worker，而不是更长的超时。",
        "在 CI 里连真实的{backend}测试，mock 恰好会掩盖这类问题。",
        "回滚成本很低：旧值只差一个环境变量。",
        "要盯的是错误率；延迟看起来一直正常，直到突然不正常。",
    ),
}

Kind = str
"""What a section's body is: one of SECTIONS' keys."""

SECTIONS: dict[Language, dict[Kind, tuple[tuple[str, ...], tuple[str, ...]]]] = {
    # kind: (headings, what the paragraph above the body opens with)
    "en": {
        "cause": (
            ("## What the trace says", "## Root cause", "### Why it fails"),
            (
                "The trace points at `{verb}`: the {error} comes out of the {backend} call, not out of our code.",
                "Read it from the bottom: {error} is raised in the client, and the last frame of ours is `{verb}`.",
                "This is the same failure as {when}: `{s1}` is too low for what {backend} needs under load.",
            ),
        ),
        "fix": (
            ("## The fix", "### Code", "## A sketch of `{verb}`"),
            (
                "Here is a version of `{verb}` that handles it.",
                "A minimal fix, with the timeout and the retry in one place.",
                "Something like this, in the {topic} module.",
            ),
        ),
        "test": (
            ("### A test for it", "## Testing"),
            ("And a test, so it does not come back.", "Pin the behaviour with a test before you change `{s1}`."),
        ),
        "config": (
            ("### Configuration", "## Config"),
            ("The config I would start from.", "Put the values in config, not in code."),
        ),
        "ops": (
            ("### Commands", "## Changing it by hand"),
            ("To change it on the cluster and check the result:", "The commands, in order:"),
        ),
        "query": (
            ("### Query", "## Finding the affected rows", "## Schema"),
            ("To see how many rows are affected:", "The table and the query I used {when}:"),
        ),
        "response": (
            ("### What the API returns",),
            ("For reference, this is what the client gets back when it happens:",),
        ),
        "settings": (
            ("## Settings", "### What each setting does"),
            ("The settings that matter, with their defaults.", "What each setting does, and the range I would keep."),
        ),
        "options": (
            ("## Options compared", "### Which approach"),
            ("I compared the usual options {when}, on staging.", "The options, measured with the same load."),
        ),
        "numbers": (
            ("## Numbers", "### Before and after"),
            ("What we measured.", "The numbers before and after the change."),
        ),
        "regions": (
            ("### Per environment",),
            ("Where each environment stands today.",),
        ),
        "plan": (
            ("## Plan", "## Rollout plan", "### Step by step"),
            ("How I would roll it out.", "Step by step, so each change can be rolled back on its own."),
        ),
        "checklist": (
            ("## Checklist", "### Before you ship"),
            ("Before it goes out:", "A checklist for the review:"),
        ),
        "notes": (
            ("### Things to watch", "## Notes"),
            ("A few things to keep in mind.", "Some notes from the last incident."),
        ),
    },
    "zh": {
        "cause": (
            ("## 堆栈说明了什么", "## 根本原因", "### 为什么会失败"),
            (
                "堆栈指向`{verb}`：{error}来自{backend}的调用，而不是我们的代码。",
                "从下往上看：{error}是客户端抛出的，我们代码里的最后一帧是`{verb}`。",
                "和{when}的问题一样：在高负载下`{s1}`对{backend}来说太小了。",
            ),
        ),
        "fix": (
            ("## 修复", "### 代码", "## `{verb}`的写法"),
            (
                "下面这个版本的`{verb}`可以处理这种情况。",
                "一个最小的修复，把超时和重试放在一起。",
                "大概这样，放在{topic}的模块里。",
            ),
        ),
        "test": (
            ("### 加一个测试", "## 测试"),
            ("再加一个测试，防止问题再出现。", "调整`{s1}`之前，先用测试固定住现在的行为。"),
        ),
        "config": (
            ("### 配置", "## 配置文件"),
            ("我会从这份配置开始。", "把这些值放在配置里，不要写在代码里。"),
        ),
        "ops": (
            ("### 命令", "## 手动修改"),
            ("在集群上修改并检查结果：", "按顺序执行这些命令："),
        ),
        "query": (
            ("### 查询", "## 找出受影响的数据", "## 表结构"),
            ("看看有多少行受影响：", "这是我{when}用的表和查询："),
        ),
        "response": (
            ("### 接口返回了什么",),
            ("出问题时客户端收到的是这样的响应：",),
        ),
        "settings": (
            ("## 配置项", "### 每个配置项的作用"),
            ("最重要的几个配置项和默认值。", "每个配置项的作用，以及我建议的范围。"),
        ),
        "options": (
            ("## 方案对比", "### 选哪种方案"),
            ("我{when}在预发环境对比了几种常见方案。", "在相同负载下测的几种方案。"),
        ),
        "numbers": (
            ("## 数据", "### 修改前后对比"),
            ("我们测到的数据。", "修改前后的数据对比。"),
        ),
        "regions": (
            ("### 各环境现状",),
            ("各个环境目前的情况。",),
        ),
        "plan": (
            ("## 计划", "## 上线计划", "### 分步进行"),
            ("我会这样上线。", "一步一步来，每一步都能单独回滚。"),
        ),
        "checklist": (
            ("## 检查清单", "### 上线之前"),
            ("上线之前确认：", "评审时的检查清单："),
        ),
        "notes": (
            ("### 需要注意的地方", "## 备注"),
            ("有几点需要注意。", "上次事故留下的一些经验。"),
        ),
    },
}
RECOMMEND: dict[Language, tuple[str, ...]] = {
    "en": (
        "I would pick `{option}`: it is the simplest one that meets the p99 target.",
        "`{option}` wins for us; the cheaper ones fail under {when}'s peak.",
    ),
    "zh": ("我会选`{option}`：满足 p99 目标的方案里它最简单。", "我们选`{option}`，便宜的方案扛不住{when}的峰值。"),
}
TABLES: dict[Language, dict[str, tuple[str, ...]]] = {
    "en": {
        "settings": ("Setting", "Default", "Range", "We run", "Why"),
        "options": ("Option", "p50 (ms)", "p99 (ms)", "Cost / month", "Notes"),
        "numbers": ("When", "Requests", "Errors", "Error rate", "p99 (ms)"),
        "regions": ("Environment", "{s1}", "{s2}", "Status"),
        "rows": ("last week", "yesterday", "today, after the fix", "staging, load test"),
        "notes": ("simplest", "needs another service", "best under load", "hard to debug", "what we run now"),
        "status": ("ok", "alerting", "rolled back", "canary"),
    },
    "zh": {
        "settings": ("配置项", "默认值", "范围", "我们的值", "原因"),
        "options": ("方案", "p50（毫秒）", "p99（毫秒）", "每月成本", "备注"),
        "numbers": ("时间", "请求数", "错误数", "错误率", "p99（毫秒）"),
        "regions": ("环境", "{s1}", "{s2}", "状态"),
        "rows": ("上周", "昨天", "今天（修复后）", "预发环境压测"),
        "notes": ("最简单", "要多维护一个服务", "高负载下最好", "不好排查", "我们现在用的"),
        "status": ("正常", "告警中", "已回滚", "灰度中"),
    },
}
STEPS: dict[Language, dict[str, tuple[str, ...]]] = {
    # in the order they are done; a plan takes some of them, in order
    "en": {
        "rollout": (
            "Add `{s1}` to the {topic} settings with a default of {d1}",
            "Write a test that fails when `{s1}` is ignored",
            "Log `{s1}` and the {error} count on every failure",
            "Deploy to staging and replay {when}'s traffic",
            "Set `{S1}={v1}` in one region only",
            "Watch p99 latency and the {error} rate for an hour",
            "Roll out to every region",
            "Delete the old code path and the temporary flag",
            "Write the new limits into the runbook",
        ),
        "debug": (
            "Reproduce it locally with `{S1}={l1}`",
            "Read the trace from the bottom; the last frame of ours is `{verb}`",
            "Check whether {backend} was slow at the same time",
            "Add a log line with `{s1}` and the request id",
            "Fix it and add the failing case as a test",
            "Retry what failed since {when}",
        ),
        "sub": (
            "check the dashboard for `{error}`",
            "compare with last week's numbers",
            "tell on-call before you start",
            "keep the rollback ready: `kubectl -n prod rollout undo deploy/{dash}`",
            "expect a short spike in {backend} latency",
        ),
        "checks": (
            "`{s1}` is set per environment, not hard-coded",
            "An alert fires when the {error} rate is above 1%",
            "The dashboard shows {backend} latency next to ours",
            "The runbook says what to do when `{verb}` fails",
            "Rollback tested on staging",
            "Load test at twice {when}'s peak",
            "`{s2}` reviewed with the owners of {backend}",
        ),
    },
    "zh": {
        "rollout": (
            "在{topic}的配置里加上`{s1}`，默认值{d1}",
            "写一个忽略`{s1}`时会失败的测试",
            "每次失败都记录`{s1}`和{error}的次数",
            "部署到预发环境，回放{when}的流量",
            "只在一个区域设置`{S1}={v1}`",
            "观察一小时的 p99 延迟和{error}的比例",
            "全量上线到所有区域",
            "删掉旧的代码路径和临时开关",
            "把新的限制写进运维手册",
        ),
        "debug": (
            "在本地用`{S1}={l1}`复现",
            "从下往上读堆栈，我们代码的最后一帧是`{verb}`",
            "确认同一时间{backend}是不是也变慢了",
            "加一行日志，记录`{s1}`和请求 ID",
            "修复，并把失败的情况加成测试",
            "重试{when}以来失败的请求",
        ),
        "sub": (
            "在监控面板上查`{error}`",
            "和上周的数据对比",
            "开始前先告诉值班同事",
            "准备好回滚命令：`kubectl -n prod rollout undo deploy/{dash}`",
            "{backend}的延迟会短暂升高，属于正常",
        ),
        "checks": (
            "`{s1}`按环境配置，没有写死",
            "{error}比例超过 1% 时会告警",
            "监控面板上能同时看到{backend}和我们的延迟",
            "运维手册写清楚了`{verb}`失败时怎么处理",
            "在预发环境演练过回滚",
            "按{when}峰值的两倍做过压测",
            "和{backend}的负责人确认过`{s2}`",
        ),
    },
}


@dataclass
class Draft:
    """One answer as it is written: its language and topic, the values its sections share, the sentences it has
    not said yet and the templates it has used (an answer says nothing twice while it has something new)."""

    rng: random.Random
    language: Language
    topic: Topic
    slots: dict[str, object]
    unsaid: list[str]
    shown: list[object] = field(default_factory=list)
    written: list[Kind] = field(default_factory=list)

    def pick(self, options: Sequence[T]) -> T:
        """One of `options` not picked before in this answer, if any is left."""
        chosen = self.rng.choice([o for o in options if o not in self.shown] or options)
        self.shown.append(chosen)
        return chosen

    def say(self, count: int) -> list[str]:
        """Up to `count` sentences not said yet in this answer."""
        said, self.unsaid = self.unsaid[:count], self.unsaid[count:]
        return [fill(sentence, self.slots) for sentence in said]

    def spent(self, kind: Kind) -> bool:
        """Whether another section of `kind` would repeat this answer: its headings or openers all used, its code
        or traces all shown, or, for a plan, a checklist or a table, one written already."""
        headings, intros = SECTIONS[self.language][kind]
        options: Sequence[object] = CODE[kind] if kind in CODE else TRACES if kind == "cause" else ()
        if kind in ONCE and kind in self.written:
            return True
        return any(all(o in self.shown for o in group) for group in (headings, intros, options) if group)

    def join(self, parts: list[str]) -> str:
        """Sentences as a paragraph: Chinese runs them together, English puts a space between."""
        return ("" if self.language == "zh" else " ").join(parts)


def draft(rng: random.Random, language: Language, topic: Topic) -> Draft:
    slots = values(rng, language, topic)
    return Draft(rng, language, topic, slots, rng.sample(PROSE[language], len(PROSE[language])))


def fenced(kind: str, body: str) -> str:
    return f"```{kind}\n{body}```"


def code(d: Draft, slots: dict[str, object], kind: Kind) -> str:
    language, template = d.pick(CODE[kind])
    return fenced(language, fill(template, slots))


def trace(d: Draft, slots: dict[str, object], kind: Kind) -> str:
    # Tracebacks are pasted bare or as text, as people paste them.
    return fenced(d.rng.choice(("", "text")), fill(d.pick(TRACES), slots))


def table(header: tuple[str, ...], rows: list[tuple[object, ...]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return "\n".join([*lines, *("| " + " | ".join(map(str, row)) + " |" for row in rows)])


def settings_table(d: Draft, slots: dict[str, object], kind: Kind) -> str:
    """The topic's settings: default, sane range, the value we run with, and why."""
    header = TABLES[d.language]["settings"]
    chosen = d.rng.sample(d.topic.settings, d.rng.randint(3, len(d.topic.settings)))
    rows: list[tuple[object, ...]] = [
        (f"`{s.name}`", s.default, f"{s.low}–{s.high}", value(d.rng, s), s.why(d.language)) for s in chosen
    ]
    if d.rng.random() < 0.4:  # the shorter form, without what we run
        header = header[:3] + header[4:]
        rows = [row[:3] + row[4:] for row in rows]
    return table(header, rows)


def options_table(d: Draft, slots: dict[str, object], kind: Kind) -> str:
    """The topic's options by latency and cost, and which one to pick."""
    options = d.topic.options.split()
    chosen = d.rng.sample(options, d.rng.randint(3, len(options)))
    rows: list[tuple[object, ...]] = []
    for option in chosen:
        p50 = d.rng.randint(2, 40)
        cost = f"${d.rng.randint(2, 80) * 25}"
        rows.append((f"`{option}`", p50, p50 * d.rng.randint(3, 12), cost, d.rng.choice(TABLES[d.language]["notes"])))
    best = min(rows, key=lambda row: int(str(row[2])))  # the recommendation is the lowest p99
    recommendation = fill(d.rng.choice(RECOMMEND[d.language]), {**slots, "option": str(best[0]).strip("`")})
    return f"{table(TABLES[d.language]['options'], rows)}\n\n{recommendation}"


def numbers_table(d: Draft, slots: dict[str, object], kind: Kind) -> str:
    """Requests, errors and latency over a few days; the error rate is the errors' share of the requests."""
    labels = TABLES[d.language]["rows"]
    rows: list[tuple[object, ...]] = []
    for label, (rates, p99) in zip(labels[: d.rng.randint(3, len(labels))], NUMBERS):
        requests = d.rng.randint(20, 900) * 1000
        errors = int(requests * d.rng.choice(rates))
        rate = f"{100 * errors / requests:.2f}%"
        rows.append((label, f"{requests:,}", f"{errors:,}", rate, d.rng.randint(*p99)))
    return table(TABLES[d.language]["numbers"], rows)


def regions_table(d: Draft, slots: dict[str, object], kind: Kind) -> str:
    """The answer's two settings and a status in each environment."""
    s1, s2 = (next(s for s in d.topic.settings if s.name == slots[key]) for key in ("s1", "s2"))
    environments = ("staging", "canary", "prod-eu-west-1", "prod-us-east-1", "prod-ap-southeast-1")
    rows: list[tuple[object, ...]] = [
        (f"`{env}`", value(d.rng, s1), value(d.rng, s2), d.rng.choice(TABLES[d.language]["status"]))
        for env in environments[: d.rng.randint(3, len(environments))]
    ]
    return table(tuple(fill(h, slots) for h in TABLES[d.language]["regions"]), rows)


def plan(d: Draft, slots: dict[str, object], kind: Kind) -> str:
    """Numbered steps in the order they are done, some with sub-bullets."""
    steps = STEPS[d.language]["debug" if d.rng.random() < 0.35 else "rollout"]
    chosen = sorted(d.rng.sample(range(len(steps)), d.rng.randint(3, min(7, len(steps)))))
    lines = []
    for number, index in enumerate(chosen, 1):
        lines.append(f"{number}. {fill(steps[index], slots)}")
        for sub in d.rng.sample(STEPS[d.language]["sub"], d.rng.choice((0, 0, 1, 2))):
            lines.append(f"   - {fill(sub, slots)}")
    return "\n".join(lines)


def checklist(d: Draft, slots: dict[str, object], kind: Kind) -> str:
    checks = d.rng.sample(STEPS[d.language]["checks"], d.rng.randint(3, 6))
    return "\n".join(f"- [{'x' if d.rng.random() < 0.3 else ' '}] {fill(check, slots)}" for check in checks)


def notes(d: Draft, slots: dict[str, object], kind: Kind) -> str:
    """A bullet list of things not said yet; a checklist once too little is left."""
    if len(d.unsaid) < 3:
        return checklist(d, slots, kind)
    return "\n".join(f"- {sentence}" for sentence in d.say(d.rng.randint(3, 5)))


NUMBERS = (
    # each row of TABLES' "rows" (last week, yesterday, after the fix, a load test): its error rates and p99 range
    ((0.0004, 0.002), (80, 400)),
    ((0.011, 0.034, 0.08), (900, 4000)),
    ((0.0004, 0.002), (80, 400)),
    ((0.0004, 0.002, 0.011), (150, 900)),
)

Body = Callable[[Draft, dict[str, object], Kind], str]
BODIES: dict[Kind, Body] = {
    "cause": trace,
    "fix": code,
    "test": code,
    "config": code,
    "ops": code,
    "query": code,
    "response": code,
    "settings": settings_table,
    "options": options_table,
    "numbers": numbers_table,
    "regions": regions_table,
    "plan": plan,
    "checklist": checklist,
    "notes": notes,
}
ONCE = ("plan", "checklist", "settings", "options", "numbers", "regions", "response")
"""Kinds an answer has once at most, past its shape's own."""
SHAPES: dict[str, tuple[Kind, ...]] = {
    # what an answer to each kind of ask is made of, in the order it tends to come
    "debug": ("cause", "response", "fix", "test", "query", "ops", "plan", "numbers", "checklist", "notes"),
    "howto": ("notes", "fix", "config", "settings", "fix", "plan", "test", "ops", "regions"),
    "ship": ("checklist", "plan", "settings", "regions", "ops", "numbers", "config", "query", "notes"),
    "tune": ("settings", "options", "numbers", "config", "regions", "plan", "fix", "notes"),
}


def section_kinds(d: Draft, shape: str) -> Iterator[Kind]:
    """Some of the shape's kinds in order, then the kinds not yet used, then any that would not repeat the answer
    (until none is left), never one twice in a row."""
    kinds = SHAPES[shape]
    chosen = [kinds[0] if d.rng.random() < 0.8 else kinds[1]]
    chosen += [kind for kind in kinds[1:] if kind != chosen[0] and d.rng.random() < 0.55]
    yield from chosen
    rest = [kind for kind in BODIES if kind not in chosen]
    d.rng.shuffle(rest)
    yield from rest
    last = rest[-1] if rest else chosen[-1]
    while fresh := [kind for kind in BODIES if kind != last and not d.spent(kind)]:
        last = d.rng.choice(fresh)
        yield last


def section(d: Draft, kind: Kind, heading: bool = True) -> str:
    """A heading (unless not `heading`), a short paragraph, and the body of `kind`."""
    d.written.append(kind)
    slots = {**d.slots, **noise(d.rng, d.topic)}
    headings, intros = SECTIONS[d.language][kind]
    # a Chinese sentence is a third of an English one's characters: one more keeps the answers' prose alike
    said = d.say(d.rng.choice((0, 1, 1, 2, 3)) + (d.language == "zh"))
    paragraph = [*said, fill(d.pick(intros), slots)]
    parts = [fill(d.pick(headings), slots)] if heading else []
    parts += [d.join(paragraph), BODIES[kind](d, slots, kind)]
    if kind in ("cause", "fix", "numbers") and d.rng.random() < 0.4:
        parts += d.say(1)
    return "\n\n".join(parts)


def opening(d: Draft, shape: str) -> str:
    return fill(d.rng.choice(OPENINGS[d.language][shape]), d.slots)


def closing(d: Draft) -> str:
    return fill(d.rng.choice(CLOSINGS[d.language]), d.slots)


def ask(rng: random.Random, language: Language, topic: Topic, question: bool = False) -> tuple[str, str]:
    """A user's message about `topic` and the shape of answer it gets; only plain asks if `question`."""
    asks = USER[language]
    shape, template = asks[rng.choice(QUESTIONS)] if question else rng.choice(asks)
    return fill(template, {**values(rng, language, topic), **noise(rng, topic)}), shape
