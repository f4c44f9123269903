"""LLM strategies over any OpenAI-compatible endpoint, with timeout, bounded retries and offline fallback.

Prompt building and reply parsing are shared by the sync strategies (the `compact --llm` CLI)
and the async functions the stream summarizer calls; only the network call differs.
"""

from __future__ import annotations

import logging
import re
from dataclasses import replace
from typing import Any, Callable, Sequence, TypeVar, get_args

import openai
import orjson
from tenacity import Retrying, stop_after_attempt, wait_exponential

from turnstream.compaction.strategies.base import Digest, Fact, FactType, Message
from turnstream.compaction.strategies.keyinfo import MAX_FACT_CHARS, KeyInfoExtractor, merge_facts, slug
from turnstream.compaction.strategies.summary import RollingSummarizer
from turnstream.compaction.strategies.text import shorten
from turnstream.compaction.tokens import truncate_text
from turnstream.text.chat import content_text, tool_calls

log = logging.getLogger(__name__)

T = TypeVar("T")

PROMPT_MAX_TOKENS = 6000
"""Cap on the dropped turns rendered into one prompt, so one request never explodes."""
MESSAGE_MAX_CHARS = 1500
_FACT_TYPES: tuple[str, ...] = get_args(FactType)

SUMMARY_INSTRUCTIONS = (
    "You maintain the rolling summary of a long conversation whose middle was removed from the context. "
    "Merge the previous summary and the removed turns into one new summary of at most {max_tokens} tokens. "
    "Keep the user's goals, facts, preferences, constraints, numbers, dates, decisions, data obtained from tools "
    "and failed attempts; condense older content first and keep the newest in more detail; no repetition. "
    "Write in the conversation's language. Reply with the summary text only."
)
EXTRACTION_INSTRUCTIONS = (
    "Extract key information from the removed turns of a conversation. Reply with JSON only: "
    '{{"facts": [{{"type": "fact|preference|event|constraint|failure", "text": "one short standalone sentence", '
    '"key": "short stable slot name such as budget, name, allergy, home city"}}]}}. '
    "Cover user facts and preferences, constraints, numbers and dates, decisions, data obtained from tools and failed attempts. "
    "When a turn restates or corrects a known fact, reuse its key so the new value replaces the old one. "
    "Return only new or changed facts, at most {max_facts}, in the conversation's language."
)

PROFILE_INSTRUCTIONS = (
    "You keep a short profile of a user for an assistant. Rewrite the notes below into one profile of at most "
    "{max_chars} characters: who the user is, stable facts, preferences and constraints. Where notes contradict "
    "each other, the later note wins. No greetings, no speculation, in the notes' language. Reply with the profile only."
)


def render_turns(dropped: Sequence[Message], first_seq: int = 0, max_tokens: int = PROMPT_MAX_TOKENS) -> str:
    """The dropped turns as numbered plain-text lines, tool calls and results included, capped in tokens."""
    lines = []
    for offset, message in enumerate(dropped):
        if not isinstance(message, dict):
            continue
        role = str(message.get("role", "?"))
        text = content_text(message.get("content"))
        calls = "; ".join(f"calls {name}({args})" for _, name, args in tool_calls(message))
        body = " ".join(part for part in (text, calls) if part)
        lines.append(f"[{first_seq + offset}] {role}: {shorten(body, MESSAGE_MAX_CHARS)}")
    return truncate_text("\n".join(lines), max_tokens)


def summary_prompt(old_summary: str, dropped: Sequence[Message], max_tokens: int, first_seq: int = 0) -> list[dict[str, str]]:
    """Chat messages asking for the merged summary."""
    user = f"Previous summary:\n{old_summary or '(none)'}\n\nRemoved turns:\n{render_turns(dropped, first_seq)}"
    return [{"role": "system", "content": SUMMARY_INSTRUCTIONS.format(max_tokens=max_tokens)}, {"role": "user", "content": user}]


def extraction_prompt(facts: Sequence[Fact], dropped: Sequence[Message], max_facts: int, first_seq: int = 0) -> list[dict[str, str]]:
    """Chat messages asking for new or changed facts as JSON."""
    known = "\n".join(orjson.dumps({"type": f.type, "text": f.text, "key": f.key}).decode() for f in facts) or "(none)"
    user = f"Known facts:\n{known}\n\nRemoved turns:\n{render_turns(dropped, first_seq)}"
    return [{"role": "system", "content": EXTRACTION_INSTRUCTIONS.format(max_facts=max_facts)}, {"role": "user", "content": user}]


def profile_prompt(profile: str, max_chars: int) -> list[dict[str, str]]:
    """Chat messages asking to merge a profile's appended notes into a short profile."""
    return [{"role": "system", "content": PROFILE_INSTRUCTIONS.format(max_chars=max_chars)}, {"role": "user", "content": profile}]


def reply_text(response: Any) -> str:
    """The first choice's content; ValueError when the reply carries none."""
    choices = getattr(response, "choices", None)
    if not choices:
        raise ValueError("LLM reply has no choices")
    content = getattr(choices[0].message, "content", None)
    if not isinstance(content, str) or not content.strip():
        raise ValueError("LLM reply is empty")
    return content.strip()


def parse_summary(content: str, max_tokens: int) -> str:
    """The summary from a reply, capped; ValueError when empty."""
    summary = truncate_text(content.strip(), max_tokens).strip()
    if not summary:
        raise ValueError("LLM summary is empty")
    return summary


_JSON_BLOCK = re.compile(r"\{.*\}|\[.*\]", re.S)


def parse_facts(content: str, first_seq: int, max_facts: int) -> list[Fact]:
    """Facts from a JSON reply (code fences and surrounding prose tolerated); ValueError when it is not the asked shape."""
    match = _JSON_BLOCK.search(content)
    if match is None:
        raise ValueError("LLM reply holds no JSON")
    data = orjson.loads(match.group(0))  # orjson.JSONDecodeError is a ValueError
    items = data.get("facts") if isinstance(data, dict) else data
    if not isinstance(items, list):
        raise ValueError("LLM reply has no facts list")
    facts = []
    for item in items[:max_facts]:
        if not isinstance(item, dict) or not isinstance(item.get("text"), str) or not item["text"].strip():
            continue
        text = shorten(item["text"], MAX_FACT_CHARS)
        kind = item.get("type") if item.get("type") in _FACT_TYPES else "fact"
        key = " ".join(str(item.get("key") or "").lower().split()) or f"{kind}:{slug(text)}"
        facts.append(Fact(type=kind, text=text, key=key, source_seq=first_seq))
    if items and not facts:
        raise ValueError("LLM reply has no usable fact")
    return facts


def completion_request(model: str, messages: list[dict[str, str]], max_tokens: int, timeout: float) -> dict[str, Any]:
    """Keyword arguments of one chat completion call, deterministic sampling."""
    return {"model": model, "messages": messages, "max_tokens": max_tokens, "temperature": 0, "timeout": timeout}


async def merge_summary(
    client: openai.AsyncOpenAI, model: str, old_summary: str, dropped: Sequence[Message], max_tokens: int, timeout: float
) -> str:
    """One LLM summary merge; raises on any failure so the caller decides how to fall back."""
    response = await client.chat.completions.create(**completion_request(model, summary_prompt(old_summary, dropped, max_tokens), max_tokens, timeout))
    return parse_summary(reply_text(response), max_tokens)


async def merge_profile(client: openai.AsyncOpenAI, model: str, profile: str, max_chars: int, timeout: float) -> str:
    """One LLM profile merge, cut to `max_chars`; raises on any failure (the appended profile then stands)."""
    # about two characters a token is safe for English and Chinese alike
    response = await client.chat.completions.create(**completion_request(model, profile_prompt(profile, max_chars), max_chars // 2, timeout))
    merged = reply_text(response)[:max_chars].strip()
    if not merged:
        raise ValueError("LLM profile is empty")
    return merged


async def extract_facts(
    client: openai.AsyncOpenAI, model: str, facts: Sequence[Fact], dropped: Sequence[Message], first_seq: int, max_facts: int, timeout: float
) -> tuple[Fact, ...]:
    """`facts` updated by one LLM extraction over `dropped`; raises on any failure."""
    messages = extraction_prompt(facts, dropped, max_facts, first_seq)
    response = await client.chat.completions.create(**completion_request(model, messages, 1024, timeout))
    return merge_facts(facts, parse_facts(reply_text(response), first_seq, max_facts), max_facts)


def client_options(base_url: str, api_key: str, timeout: float) -> dict[str, Any]:
    """Constructor arguments shared by `openai.OpenAI` and `openai.AsyncOpenAI`; retries are ours (tenacity)."""
    return {"base_url": base_url, "api_key": api_key, "timeout": timeout, "max_retries": 0}


class _LLMStrategy:
    """A sync LLM call with timeout and bounded retries; any failure falls back to the offline strategy."""

    name = "llm"

    def __init__(self, client: openai.OpenAI, model: str, timeout: float, max_retries: int, fallback: Any) -> None:
        self.client = client
        self.model = model
        self.timeout = timeout
        self.max_retries = max_retries
        self.fallback = fallback

    def _complete(self, messages: list[dict[str, str]], max_tokens: int, parse: Callable[[str], T]) -> T:
        # Malformed output is retried too: a second sample is often well-formed.
        retrying = Retrying(stop=stop_after_attempt(self.max_retries + 1), wait=wait_exponential(multiplier=0.05, max=1), reraise=True)
        for attempt in retrying:
            with attempt:
                response = self.client.chat.completions.create(**completion_request(self.model, messages, max_tokens, self.timeout))
                return parse(reply_text(response))
        raise AssertionError("unreachable: tenacity reraises the last error")

    def apply(self, digest: Digest, dropped: Sequence[Message], first_seq: int) -> Digest:
        try:
            return self._apply(digest, dropped, first_seq)
        except Exception as error:  # timeout, HTTP error, bad output: the offline result is always available
            log.warning("%s failed (%s: %s); using the offline strategy", self.name, type(error).__name__, error)
            return self.fallback.apply(digest, dropped, first_seq)

    def _apply(self, digest: Digest, dropped: Sequence[Message], first_seq: int) -> Digest:
        raise NotImplementedError


class LLMSummarizer(_LLMStrategy):
    """Rolling summary merged by an LLM; falls back to `RollingSummarizer`."""

    name = "llm-summary"

    def __init__(self, client: openai.OpenAI, model: str, max_tokens: int = 400, timeout: float = 20.0, max_retries: int = 2) -> None:
        super().__init__(client, model, timeout, max_retries, RollingSummarizer(max_tokens))
        self.max_tokens = max_tokens

    def _apply(self, digest: Digest, dropped: Sequence[Message], first_seq: int) -> Digest:
        messages = summary_prompt(digest.summary, dropped, self.max_tokens, first_seq)
        summary = self._complete(messages, self.max_tokens, lambda text: parse_summary(text, self.max_tokens))
        return replace(digest, summary=summary)


class LLMKeyInfoExtractor(_LLMStrategy):
    """Facts extracted by an LLM, merged by key like the offline ones; falls back to `KeyInfoExtractor`."""

    name = "llm-keyinfo"

    def __init__(self, client: openai.OpenAI, model: str, max_facts: int = 40, timeout: float = 20.0, max_retries: int = 2) -> None:
        super().__init__(client, model, timeout, max_retries, KeyInfoExtractor(max_facts))
        self.max_facts = max_facts

    def _apply(self, digest: Digest, dropped: Sequence[Message], first_seq: int) -> Digest:
        messages = extraction_prompt(digest.facts, dropped, self.max_facts, first_seq)
        found = self._complete(messages, 1024, lambda text: parse_facts(text, first_seq, self.max_facts))
        return replace(digest, facts=merge_facts(digest.facts, found, self.max_facts))
