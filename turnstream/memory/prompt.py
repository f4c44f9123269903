"""The read path: a ready-to-send prompt from one Redis round trip and no LLM call."""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from typing import Any

from turnstream.compaction.greeting import is_small_talk
from turnstream.compaction.marker import Language, detect_language
from turnstream.compaction.strategies.text import keywords
from turnstream.compaction.tokens import count_message, count_messages
from turnstream.memory.profile import cut_profile
from turnstream.memory.store import MemoryStore, Recalled
from turnstream.schemas.context import ContextDoc

Message = dict[str, Any]

MAX_QUERY_KEYWORDS = 16
"""Each query keyword costs one set read in the recall script."""

_BLOCK_TEXT: dict[Language, tuple[str, str, str, dict[str, str]]] = {
    "en": (
        "[Memory about the user: use it where it helps, do not recite it]",
        "Profile:",
        "Relevant memories:",
        {"fact": "fact", "preference": "preference", "event": "event", "summary": "earlier conversation"},
    ),
    "zh": (
        "[关于用户的记忆：相关时参考，不要复述]",
        "用户画像：",
        "相关记忆：",
        {"fact": "事实", "preference": "偏好", "event": "事件", "summary": "往期对话"},
    ),
}


@dataclass(frozen=True, slots=True)
class Prompt:
    """What build_prompt returns."""

    messages: list[Message]
    """Anchors, marker and summary block, the memory block, the rest of the context, the user message."""
    recalled: list[dict[str, str]]
    """The memories in the block, best first: {id, type, text}."""
    skipped_recall: bool
    """True when the user message was small talk: no recall, nothing recorded."""
    timings: dict[str, float]
    """Milliseconds: redis (the one round trip), assemble, total."""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def split_context(doc: ContextDoc | None, user_text: str) -> tuple[list[Message], list[Message]]:
    """(head, rest) of the context: the memory block goes between them.

    The head is the anchors, then the marker and summary block when the history was compacted;
    without a marker, the leading system messages and the first user message (and what came
    before it, as the compactor pins it). A last message equal to the new user message is dropped:
    the gateway may read after its turn was applied, and the user message comes last anyway.
    """
    messages = list(doc.messages) if doc else []
    if messages and messages[-1].get("role") == "user" and messages[-1].get("content") == user_text:
        messages.pop()
    if doc is not None and doc.marker_index is not None:
        end = doc.marker_index + 1
        if (doc.summary or doc.facts) and end < len(messages) and messages[end].get("role") == "system":
            end += 1
    else:
        end = next((i + 1 for i, m in enumerate(messages) if m.get("role") == "user"), None)
        if end is None:
            end = next((i for i, m in enumerate(messages) if m.get("role") != "system"), len(messages))
    return messages[:end], messages[end:]


def memory_block(profile: str, recalled: list[Recalled], language: Language) -> Message | None:
    """The one system message holding the profile and the recalled memories; None when both are empty."""
    if not profile and not recalled:
        return None
    title, profile_heading, memories_heading, labels = _BLOCK_TEXT[language]
    parts = [title]
    if profile:
        parts.append(f"{profile_heading}\n{profile}")
    if recalled:
        open_, close = ("（", "）") if language == "zh" else ("(", ") ")
        lines = "\n".join(f"- {open_}{labels[m.type]}{close}{m.text}" for m in recalled)
        parts.append(f"{memories_heading}\n{lines}")
    return {"role": "system", "content": "\n".join(parts)}


def assemble(
    doc: ContextDoc | None, profile: str, recalled: list[Recalled], user_text: str, read_chars: int, budget_tokens: int
) -> tuple[list[Message], list[Recalled]]:
    """The prompt's messages and the memories kept in it, within `budget_tokens` when the context allows.

    Over budget, the lowest-scored memories go first, then the profile is cut from its oldest end;
    the context itself is never cut here (it was compacted to budget_tokens upstream).
    """
    head, rest = split_context(doc, user_text)
    user = {"role": "user", "content": user_text}
    language = detect_language([*head, *rest, user])
    fixed = count_messages([*head, *rest, user])
    profile = cut_profile(profile, read_chars)
    while True:
        block = memory_block(profile, recalled, language)
        if block is None or fixed + count_message(block) <= budget_tokens:
            return [*head, *([block] if block else []), *rest, user], recalled
        if recalled:
            recalled = recalled[:-1]
        else:
            profile = cut_profile(profile, len(profile) * 3 // 4)


async def build_prompt(
    memory: MemoryStore, context_key: str, session_key: str, owner: str, user_text: str, k: int | None = None
) -> Prompt:
    """Read the session's context, the owner's profile and memories (one round trip), and assemble the prompt.

    Memories dropped for the budget were already recorded as injected by the script: that only
    happens when the compacted context nearly fills prompt_budget_tokens, and undoing it would cost
    a second round trip.
    """
    settings = memory.settings
    started = time.perf_counter()
    skipped = is_small_talk(user_text)
    query = () if skipped else keywords(user_text, MAX_QUERY_KEYWORDS)
    asked = time.perf_counter()
    result = await memory.recall(owner, session_key, context_key, query, settings.recall_k if k is None else k)
    fetched = time.perf_counter()
    doc = ContextDoc.from_json(result.doc) if result.doc else None
    messages, kept = assemble(doc, result.profile, result.recalled, user_text, settings.profile_read_chars, settings.prompt_budget_tokens)
    done = time.perf_counter()
    timings = {
        "redis": round((fetched - asked) * 1000, 3),
        "assemble": round((done - fetched) * 1000, 3),
        "total": round((done - started) * 1000, 3),
    }
    recalled = [{"id": m.id, "type": m.type, "text": m.text} for m in kept]
    return Prompt(messages, recalled, skipped, timings)
