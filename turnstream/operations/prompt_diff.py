"""Two prompts for the same question, compared: the live prefix's and a shadow's (`turnstream diff`). Pure: no I/O.

Each side is first reduced to what is compared (`PromptSide`): its messages and tokens, the facts its summary block
shows (by key, from the prompt's provenance and the context document), the memories its memory block holds (by id)
and the archived turns it recalled (by archive entry id, from provenance). The diff says what the shadow adds,
removes and changes against the live side, and carries the unified text diff of the two prompts.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from turnstream.prompt.assemble import Prompt
from turnstream.schemas.context import ContextDoc
from turnstream.text.chat import Message, content_text
from turnstream.text.tokens import count_messages


@dataclass(frozen=True, slots=True)
class RecalledRef:
    """An archived turn a prompt recalled."""

    id: str
    """The archive entry's id (schemas/archive.py entry_id: one per session and turn id)."""
    session: str
    position: int
    """Its position in its conversation, from 0."""


@dataclass(frozen=True, slots=True)
class PromptSide:
    """What is compared of one side's prompt."""

    messages: Sequence[Message]
    tokens: int
    facts: Mapping[str, str]
    """Key -> text of each fact the summary block shows."""
    memories: Mapping[str, str]
    """Memory id -> text of each memory in the memory block."""
    recalled: Mapping[str, RecalledRef]
    """Archive entry id -> the archived turn, for each turn the memory block recalled."""


@dataclass(frozen=True, slots=True)
class Changed:
    """One fact or memory both sides show, with other text."""

    id: str
    """The fact's key or the memory's id."""
    live: str
    shadow: str


@dataclass(frozen=True, slots=True)
class Delta:
    """How the shadow's facts (or memories) differ from the live side's, each sorted by key."""

    added: dict[str, str]
    """In the shadow's prompt only: key -> text."""
    removed: dict[str, str]
    """In the live prompt only: key -> text."""
    changed: list[Changed]

    @property
    def count(self) -> int:
        return len(self.added) + len(self.removed) + len(self.changed)


@dataclass(frozen=True, slots=True)
class Recall:
    """Archived turns the shadow's prompt recalls and the live one does not (gained), and the reverse (lost)."""

    gained: list[RecalledRef]
    lost: list[RecalledRef]

    @property
    def count(self) -> int:
        return len(self.gained) + len(self.lost)


@dataclass(frozen=True, slots=True)
class PromptDiff:
    """The shadow's prompt against the live one, for one question."""

    live_tokens: int
    shadow_tokens: int
    facts: Delta
    memories: Delta
    recalled: Recall
    text: list[str]
    """The unified diff (difflib) of the two prompts, a line per message line; empty when they are equal."""

    @property
    def identical(self) -> bool:
        return not self.text and self.live_tokens == self.shadow_tokens and not self.changes

    @property
    def changes(self) -> int:
        """Facts, memories and recalled turns that differ."""
        return self.facts.count + self.memories.count + self.recalled.count


def prompt_side(prompt: Prompt, doc: ContextDoc | None) -> PromptSide:
    """One side as compared: `prompt` must come with its provenance (`build_prompt(..., provenance=True)`); `doc` is
    the context it was built from (the facts' text is the document's: provenance names a fact by its key)."""
    if prompt.sources is None:
        raise ValueError("a prompt compared needs its sources: build_prompt(..., provenance=True)")
    sources = [source for message in prompt.sources for source in message]
    texts = {fact.key or fact.text: fact.text for fact in doc.facts} if doc is not None else {}
    facts = {key: texts[key] for s in sources if s.get("kind") == "fact" and (key := s.get("key", "")) in texts}
    recalled = {
        s["id"]: RecalledRef(s["id"], s.get("session", ""), s.get("position", -1))
        for s in sources
        if s.get("kind") == "archive" and "id" in s
    }
    memories = {memory["id"]: memory["text"] for memory in prompt.recalled}
    messages: list[Message] = [dict(m) for m in prompt.messages]
    return PromptSide(messages, count_messages(messages), facts, memories, recalled)


def keyed_delta(live: Mapping[str, str], shadow: Mapping[str, str]) -> Delta:
    """What `shadow` adds, removes and changes against `live`, key by key."""
    return Delta(
        {key: shadow[key] for key in sorted(shadow.keys() - live.keys())},
        {key: live[key] for key in sorted(live.keys() - shadow.keys())},
        [
            Changed(key, live[key], shadow[key])
            for key in sorted(live.keys() & shadow.keys())
            if live[key] != shadow[key]
        ],
    )


def prompt_lines(messages: Sequence[Message]) -> list[str]:
    """A prompt as text lines: each message's role, then its text, a line per line."""
    lines: list[str] = []
    for message in messages:
        lines.append(f"[{message.get('role', '?')}]")
        lines += content_text(message.get("content")).splitlines() or [""]
    return lines


def diff_prompts(live: PromptSide, shadow: PromptSide, names: tuple[str, str] = ("live", "shadow")) -> PromptDiff:
    """The shadow's prompt against the live one; `names` label the text diff's two files."""
    text = difflib.unified_diff(prompt_lines(live.messages), prompt_lines(shadow.messages), *names, lineterm="")
    return PromptDiff(
        live.tokens,
        shadow.tokens,
        keyed_delta(live.facts, shadow.facts),
        keyed_delta(live.memories, shadow.memories),
        Recall(
            [shadow.recalled[key] for key in sorted(shadow.recalled.keys() - live.recalled.keys())],
            [live.recalled[key] for key in sorted(live.recalled.keys() - shadow.recalled.keys())],
        ),
        list(text),
    )
