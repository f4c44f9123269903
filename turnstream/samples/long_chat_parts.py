"""The parts a long chat's assistant answer is built from (pure data and small builders, from a seeded rng): prose,
bullet lists, multi-step plans, checklists, markdown tables, stack traces and code in several languages, each
about one topic of a project, in the chat's language wherever it is prose (samples/long_chats.py)."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

from turnstream.text.language import Language


@dataclass(frozen=True)
class Topic:
    """What a stretch of the chat is about: its name in each language and the identifier its code uses."""

    en: str
    zh: str
    slug: str

    def name(self, language: Language) -> str:
        return self.zh if language == "zh" else self.en


TOPICS = (
    Topic("retry backoff", "重试退避", "retry_backoff"),
    Topic("upload queue", "上传队列", "upload_queue"),
    Topic("schema migration", "数据库迁移", "schema_migration"),
    Topic("cache invalidation", "缓存失效", "cache_invalidation"),
    Topic("rate limiter", "限流器", "rate_limiter"),
    Topic("auth tokens", "登录令牌", "auth_tokens"),
    Topic("search index", "搜索索引", "search_index"),
    Topic("billing export", "账单导出", "billing_export"),
    Topic("image resizer", "图片压缩", "image_resizer"),
    Topic("webhook signer", "回调签名", "webhook_signer"),
    Topic("feature flags", "功能开关", "feature_flags"),
    Topic("log shipping", "日志收集", "log_shipping"),
)
THINGS = ("timeout", "batch_size", "max_retries", "ttl_seconds", "workers", "window_ms", "chunk_bytes", "region")
"""The settings a topic's answers keep coming back to."""
NUMBERS = (3, 5, 10, 30, 64, 250, 1000, 4096)


@dataclass(frozen=True)
class Slots:
    """The values one section's templates are filled with."""

    topic: str
    slug: str
    thing: str
    n: int
    m: int

    @property
    def camel(self) -> str:
        return "".join(part.title() for part in self.slug.split("_"))

    def fill(self, template: str) -> str:
        return template.format(
            topic=self.topic,
            slug=self.slug,
            camel=self.camel,
            thing=self.thing,
            THING=self.thing.upper(),
            n=self.n,
            m=self.m,
            half=max(self.n // 2, 1),
        )


def slots(rng: random.Random, topic: Topic, language: Language) -> Slots:
    return Slots(topic.name(language), topic.slug, rng.choice(THINGS), rng.choice(NUMBERS), rng.choice(NUMBERS))


USER: dict[Language, tuple[str, ...]] = {
    "en": (
        "How should I set up the {topic}?",
        "Yesterday the {topic} broke again, any idea why?",
        "Can you show me the {topic} with {thing}?",
        "Next week we ship the {topic}. What should I check?",
        "Thanks. And what about {thing} for the {topic}?",
        "This morning I tried your {topic} code, it fails on {thing}.",
        "Getting `{camel}Error: {thing} exceeded ({n})` from the {topic}, what now?",
        "Is {thing}: {n} too high for the {topic}?",
    ),
    "zh": (
        "{topic}应该怎么配置？",
        "昨天{topic}又出问题了，知道为什么吗？",
        "能给我看一下带{thing}的{topic}吗？",
        "下周要上线{topic}，需要检查什么？",
        "谢谢。那{topic}的{thing}呢？",
        "今天试了你的{topic}代码，{thing}报错了。",
        "{topic}报了 `{camel}Error: {thing} exceeded ({n})`，怎么办？",
        "{topic}的 {thing}: {n} 是不是太大了？",
    ),
}
PROSE: dict[Language, tuple[str, ...]] = {
    "en": (
        "The {topic} should read {thing} from the settings object rather than a constant, so a deploy can change it.",
        "As we discussed last week, keep the {topic} idempotent: a retried call must not apply twice.",
        "A value of {n} for {thing} is a sane default; measure before you raise it.",
        "If it failed yesterday, look at the {thing} first: most {topic} incidents start there.",
        "This keeps the hot path small and moves the slow part of the {topic} behind a queue.",
        "Log the {thing} with every error, or the {topic} failures will be impossible to tell apart.",
        "With {m} requests a second and {thing} at {n}, the {topic} stays well inside its budget.",
        "The trace below says the {topic} gave up after {n} attempts, which is exactly the {thing} limit.",
        "Do not share one client between threads here: the {topic} keeps per-connection state.",
        "Roll it out behind a flag first, then raise {thing} step by step while you watch the error rate.",
    ),
    "zh": (
        "{topic}应该从配置对象读取{thing}，而不是写死常量，这样部署时可以调整。",
        "就像上周说的，{topic}要保持幂等：重试的调用不能生效两次。",
        "{thing}设为{n}是合理的默认值，调大之前先测一下。",
        "如果昨天失败了，先看{thing}：大多数{topic}的事故都从这里开始。",
        "这样热路径保持精简，把{topic}里慢的部分放到队列后面。",
        "每次出错都记录{thing}，否则{topic}的各种失败根本分不清。",
        "每秒{m}个请求、{thing}为{n}时，{topic}完全在预算之内。",
        "下面的堆栈说明{topic}重试了{n}次后放弃，正好是{thing}的上限。",
        "这里不要在线程之间共用一个客户端：{topic}保存了每个连接的状态。",
        "先用开关灰度上线，再一步步调大{thing}，同时盯着错误率。",
    ),
}
HEADINGS: dict[Language, tuple[str, ...]] = {
    "en": (
        "## Setting up the {topic}",
        "### Why {thing} matters",
        "## Checklist",
        "### What to test",
        "## Example",
        "## Root cause",
        "### Plan",
        "## Options compared",
    ),
    "zh": (
        "## 配置{topic}",
        "### 为什么{thing}很重要",
        "## 检查清单",
        "### 需要测试什么",
        "## 示例",
        "## 根本原因",
        "### 计划",
        "## 方案对比",
    ),
}
STEPS: dict[Language, tuple[str, ...]] = {
    "en": (
        "Add `{thing}` to the {topic} settings with a default of {n}",
        "Write a test that fails when {thing} is ignored",
        "Deploy to staging and replay yesterday's traffic",
        "Watch the p99 latency and the error rate for an hour",
        "Raise {thing} to {m} on one region only",
        "Roll out everywhere and remove the old code path",
        "Write down the new limits in the runbook",
    ),
    "zh": (
        "在{topic}的配置里加上 `{thing}`，默认值 {n}",
        "写一个忽略{thing}时会失败的测试",
        "部署到预发环境，回放昨天的流量",
        "观察一小时的 p99 延迟和错误率",
        "只在一个区域把{thing}调到 {m}",
        "全量上线，删掉旧的代码路径",
        "把新的限制写进运维手册",
    ),
}
SUB_STEPS: dict[Language, tuple[str, ...]] = {
    "en": ("check the logs for `{THING}`", "compare with last week's numbers", "ask on-call before you start"),
    "zh": ("在日志里查 `{THING}`", "和上周的数据对比", "开始前先告诉值班同事"),
}
TABLE_HEADERS: dict[Language, tuple[tuple[str, ...], ...]] = {
    "en": (("Setting", "Default", "Range", "Why"), ("Option", "p50 (ms)", "p99 (ms)", "Cost / month", "Notes")),
    "zh": (("配置项", "默认值", "范围", "原因"), ("方案", "p50（毫秒）", "p99（毫秒）", "每月成本", "备注")),
}
TABLE_WHY: dict[Language, tuple[str, ...]] = {
    "en": ("keeps retries bounded", "matches the upstream limit", "fits one page", "measured last week"),
    "zh": ("限制重试次数", "和上游限制一致", "正好一页", "上周测过"),
}
TABLE_NOTES: dict[Language, tuple[str, ...]] = {
    "en": ("simplest", "needs Redis", "best under load", "only with the flag on"),
    "zh": ("最简单", "需要 Redis", "高负载下最好", "只在打开开关时"),
}

CODE: tuple[tuple[str, str], ...] = (
    (
        "python",
        "import logging\nimport time\n\nlog = logging.getLogger(__name__)\n\n\n"
        "def {slug}(client, {thing}={n}):\n"
        '    """Call the {topic} with backoff; give up after {thing} attempts."""\n'
        "    for attempt in range({thing}):\n"
        "        try:\n"
        "            return client.send(timeout={half})\n"
        "        except TimeoutError as error:\n"
        '            log.warning("{slug} attempt %d failed: %s", attempt, error)\n'
        "            time.sleep(min(2 ** attempt, {m}))\n"
        '    raise RuntimeError("{slug} gave up after %d attempts" % {thing})\n',
    ),
    (
        "python",
        "from dataclasses import dataclass\n\n\n@dataclass(frozen=True)\nclass {camel}Settings:\n"
        "    {thing}: int = {n}\n    enabled: bool = True\n\n    def validate(self) -> None:\n"
        "        if self.{thing} <= 0:\n"
        '            raise ValueError(f"{thing} must be positive, not {{self.{thing}}}")\n',
    ),
    (
        "typescript",
        "export interface {camel}Options {{\n  {thing}: number;\n  region: string;\n}}\n\n"
        "export async function {camel}(opts: {camel}Options): Promise<void> {{\n"
        "  const started = Date.now();\n  for (let i = 0; i < opts.{thing}; i++) {{\n"
        "    const res = await fetch(`/api/{slug}?region=${{opts.region}}`);\n    if (res.ok) return;\n"
        "    await new Promise((r) => setTimeout(r, {m} * 2 ** i));\n  }}\n"
        "  throw new Error(`{slug} failed after ${{Date.now() - started}} ms`);\n}}\n",
    ),
    (
        "go",
        "func {camel}(ctx context.Context, c *Client) error {{\n\tctx, cancel := context.WithTimeout(ctx, {n}*time.Second)\n"
        "\tdefer cancel()\n\tfor i := 0; i < {m}; i++ {{\n\t\tif err := c.Do(ctx); err == nil {{\n\t\t\treturn nil\n\t\t}}\n"
        '\t}}\n\treturn fmt.Errorf("{slug}: %w", ErrExhausted)\n}}\n',
    ),
    (
        "bash",
        "export {THING}={n}\nkubectl rollout restart deploy/{slug}\n"
        "kubectl logs -l app={slug} --since=1h | grep -i error | tail -n {m}\n",
    ),
    (
        "sql",
        "ALTER TABLE {slug} ADD COLUMN {thing} integer NOT NULL DEFAULT {n};\n"
        "CREATE INDEX CONCURRENTLY {slug}_{thing}_idx ON {slug} ({thing});\n"
        "SELECT region, count(*) AS failures FROM {slug}_events\n"
        "WHERE status = 'failed' AND created_at > now() - interval '1 day'\nGROUP BY region ORDER BY failures DESC;\n",
    ),
    ("yaml", "{slug}:\n  {thing}: {n}\n  enabled: true\n  regions:\n    - eu-west-1\n    - us-east-1\n"),
    ("json", '{{\n  "{slug}": {{\n    "{thing}": {n},\n    "max_inflight": {m},\n    "dry_run": false\n  }}\n}}\n'),
)
TRACES: tuple[str, ...] = (
    "Traceback (most recent call last):\n"
    '  File "/srv/app/{slug}/worker.py", line {m}, in run\n    result = {slug}(client)\n'
    '  File "/srv/app/{slug}/core.py", line {n}, in {slug}\n    return client.send(timeout={half})\n'
    '  File "/usr/lib/python3.11/site-packages/httpx/_client.py", line 1018, in send\n'
    "    raise TimeoutException(message) from exc\n"
    "httpx.ReadTimeout: {thing} exceeded after {n} attempts\n",
    'Exception in thread "{slug}-pool-1" java.lang.IllegalStateException: {thing} must be at most {m}\n'
    "\tat com.example.{slug}.{camel}Service.apply({camel}Service.java:{n})\n"
    "\tat com.example.{slug}.{camel}Controller.handle({camel}Controller.java:{m})\n"
    "\tat java.base/java.util.concurrent.ThreadPoolExecutor.runWorker(ThreadPoolExecutor.java:1136)\n",
    "panic: {slug}: {thing} exhausted ({n})\n\ngoroutine 17 [running]:\n"
    "main.{camel}(0xc000120000)\n\t/src/{slug}/main.go:{m} +0x1a5\n"
    "main.main()\n\t/src/{slug}/main.go:{n} +0x65\nexit status 2\n",
)


def prose(rng: random.Random, language: Language, slot: Slots, sentences: int) -> str:
    return ("" if language == "zh" else " ").join(slot.fill(rng.choice(PROSE[language])) for _ in range(sentences))


def bullets(rng: random.Random, language: Language, slot: Slots) -> str:
    return "\n".join(f"- {slot.fill(rng.choice(PROSE[language]))}" for _ in range(rng.randint(3, 6)))


def plan(rng: random.Random, language: Language, slot: Slots) -> str:
    """Numbered steps, some with sub-bullets."""
    steps = rng.sample(STEPS[language], rng.randint(3, len(STEPS[language])))
    lines = []
    for number, step in enumerate(steps, 1):
        lines.append(f"{number}. {slot.fill(step)}")
        if rng.random() < 0.4:
            lines.append(f"   - {slot.fill(rng.choice(SUB_STEPS[language]))}")
    return "\n".join(lines)


def checklist(rng: random.Random, language: Language, slot: Slots) -> str:
    steps = rng.sample(STEPS[language], rng.randint(3, 5))
    return "\n".join(f"- [{'x' if rng.random() < 0.3 else ' '}] {slot.fill(step)}" for step in steps)


def table(rng: random.Random, language: Language, slot: Slots) -> str:
    """A markdown table: settings with their defaults, or options compared by numbers."""
    settings, options = TABLE_HEADERS[language]
    rows: list[tuple[str, ...]]
    if rng.random() < 0.5:
        rows = [
            (f"`{thing}`", str(rng.choice(NUMBERS)), f"1–{rng.choice(NUMBERS) * 4}", rng.choice(TABLE_WHY[language]))
            for thing in rng.sample(THINGS, rng.randint(3, 6))
        ]
        header = settings
    else:
        rows = [
            (
                f"{slot.slug}-{variant}",
                str(rng.randint(2, 40)),
                str(rng.randint(40, 900)),
                f"${rng.randint(20, 2000)}",
                rng.choice(TABLE_NOTES[language]),
            )
            for variant in rng.sample(("inline", "queue", "batch", "cron", "stream", "cache"), rng.randint(3, 6))
        ]
        header = options
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return "\n".join([*lines, *("| " + " | ".join(row) + " |" for row in rows)])


def code(rng: random.Random, language: Language, slot: Slots) -> str:
    kind, template = rng.choice(CODE)
    return f"```{kind}\n{slot.fill(template)}```"


def trace(rng: random.Random, language: Language, slot: Slots) -> str:
    return f"```\n{slot.fill(rng.choice(TRACES))}```"


BODIES: tuple[Callable[[random.Random, Language, Slots], str], ...] = (
    bullets,
    plan,
    checklist,
    table,
    code,
    code,
    trace,
)
"""What a section holds under its heading and prose; code twice as often as the others."""


def section(rng: random.Random, language: Language, topic: Topic) -> str:
    """A heading, a paragraph, and one body (list, plan, checklist, table, code or a stack trace)."""
    slot = slots(rng, topic, language)
    heading = slot.fill(rng.choice(HEADINGS[language]))
    body = rng.choice(BODIES)(rng, language, slot)
    return f"{heading}\n\n{prose(rng, language, slot, rng.randint(2, 5))}\n\n{body}"


def user_message(rng: random.Random, language: Language, topic: Topic) -> str:
    return slots(rng, topic, language).fill(rng.choice(USER[language]))
