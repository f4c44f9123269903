"""The LLM strategies' prompts and the parsing of their replies: pure, no client and no network.

turnstream/llm sends them, from the sync strategies (the `compact --llm` CLI) and from the async calls the
stream summarizer makes; only the network call differs between the two.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, TypeGuard, get_args

import orjson

from turnstream.compaction.strategies.base import Fact, FactType
from turnstream.compaction.strategies.grounding import Grounded, split_grounded
from turnstream.compaction.strategies.keyinfo import MAX_FACT_CHARS, slug
from turnstream.text.chat import Message, content_text, tool_calls
from turnstream.text.prose import shorten
from turnstream.text.tokens import truncate_text

PROMPT_MAX_TOKENS = 6000
"""Cap on the dropped turns rendered into one prompt, so one request never explodes."""
MESSAGE_MAX_CHARS = 1500
_FACT_TYPES: tuple[FactType, ...] = get_args(FactType)


def _is_fact_type(value: object) -> TypeGuard[FactType]:
    return value in _FACT_TYPES


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
    "Copy identifiers, codes, amounts, dates and other numbers exactly as the turns write them: "
    "a fact with an identifier or number the turns do not hold is discarded. "
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


def summary_prompt(
    old_summary: str, dropped: Sequence[Message], max_tokens: int, first_seq: int = 0
) -> list[dict[str, str]]:
    """Chat messages asking for the merged summary."""
    user = f"Previous summary:\n{old_summary or '(none)'}\n\nRemoved turns:\n{render_turns(dropped, first_seq)}"
    return [
        {"role": "system", "content": SUMMARY_INSTRUCTIONS.format(max_tokens=max_tokens)},
        {"role": "user", "content": user},
    ]


def extraction_prompt(
    facts: Sequence[Fact], dropped: Sequence[Message], max_facts: int, first_seq: int = 0
) -> list[dict[str, str]]:
    """Chat messages asking for new or changed facts as JSON."""
    known = "\n".join(orjson.dumps({"type": f.type, "text": f.text, "key": f.key}).decode() for f in facts) or "(none)"
    user = f"Known facts:\n{known}\n\nRemoved turns:\n{render_turns(dropped, first_seq)}"
    return [
        {"role": "system", "content": EXTRACTION_INSTRUCTIONS.format(max_facts=max_facts)},
        {"role": "user", "content": user},
    ]


def profile_prompt(profile: str, max_chars: int) -> list[dict[str, str]]:
    """Chat messages asking to merge a profile's appended notes into a short profile."""
    return [
        {"role": "system", "content": PROFILE_INSTRUCTIONS.format(max_chars=max_chars)},
        {"role": "user", "content": profile},
    ]


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
        kind: FactType = item["type"] if _is_fact_type(item.get("type")) else "fact"
        key = " ".join(str(item.get("key") or "").lower().split()) or f"{kind}:{slug(text)}"
        facts.append(Fact(type=kind, text=text, key=key, source_seq=first_seq))
    if items and not facts:
        raise ValueError("LLM reply has no usable fact")
    return facts


def parse_grounded_facts(content: str, dropped: Sequence[Message], first_seq: int, max_facts: int) -> Grounded:
    """`parse_facts`, split by whether each fact's identifiers and numbers occur in the `dropped` turns it came
    from (strategies/grounding.py); ValueError when the reply is not the asked shape."""
    return split_grounded(parse_facts(content, first_seq, max_facts), dropped)


def completion_request(model: str, messages: list[dict[str, str]], max_tokens: int, timeout: float) -> dict[str, Any]:
    """Keyword arguments of one chat completion call, deterministic sampling."""
    return {"model": model, "messages": messages, "max_tokens": max_tokens, "temperature": 0, "timeout": timeout}
