"""A stand-in for a chat model behind the worker's LLM path, for figure 15 (`turnstream bench --agents-stream
--llm-stand-in`): a real local HTTP server speaking the chat completions API, so the worker's summarizer, its
retries and the grounding check all run as they would against a model.

It is no model, and the figure measures the path, not a model's skill. Its answers are those of a plain,
unremarkable model, deterministic so two runs agree:
- a summary merge keeps the previous summary and adds each removed turn's first sentence (a tool result's first
  120 characters), dropping the oldest lines past the token budget;
- a key-info extraction gives each removed user turn's first sentence and each tool result's first 200 characters
  as facts, copied verbatim, under keys of its own (so they sit beside the offline facts, or push them out);
- and every extraction also invents one booking reference (`QZ` and six digits, never in a trace) in its first
  fact, which the worker must discard: figure 15 counts the prompts that hold one.
"""

from __future__ import annotations

import re
import threading
from typing import Any

import orjson
from pydantic import SecretStr

from turnstream.compaction.strategies.prompts import EXTRACTION_INSTRUCTIONS, SUMMARY_INSTRUCTIONS
from turnstream.settings import Settings
from turnstream.text.tokens import count_text
from turnstream_tools.openai_server import OpenAIServer, completion

_TURN = re.compile(r"^\[(\d+)\] (\w+): ", re.M)
_SENTENCE_END = re.compile(r"(?<=[.!?。！？])\s")
SUMMARY_LINE_CHARS = 160
TOOL_LINE_CHARS = 120
TOOL_FACT_CHARS = 200
STAND_IN_MODEL = "stand-in"


def _removed_turns(prompt: str) -> list[tuple[str, str]]:
    """(role, body) of each turn under "Removed turns:" in a summary or extraction prompt."""
    turns = prompt.split("Removed turns:\n", 1)[-1]
    marks = list(_TURN.finditer(turns))
    return [
        (mark.group(2), turns[mark.end() : marks[i + 1].start() if i + 1 < len(marks) else len(turns)].strip())
        for i, mark in enumerate(marks)
    ]


def _first_sentence(text: str, limit: int) -> str:
    return _SENTENCE_END.split(text.strip(), 1)[0][:limit].strip()


def _turn_lines(prompt: str) -> list[str]:
    """One line a removed turn: a tool result's head, anything else's first sentence."""
    lines = []
    for role, body in _removed_turns(prompt):
        line = body[:TOOL_LINE_CHARS] if role == "tool" else _first_sentence(body, SUMMARY_LINE_CHARS)
        if line:
            lines.append(f"{role}: {line}")
    return lines


def summary_reply(prompt: str, max_tokens: int) -> str:
    """The previous summary's lines and a line a removed turn, the oldest dropped past `max_tokens`."""
    previous = prompt.split("Previous summary:\n", 1)[-1].split("\n\nRemoved turns:", 1)[0]
    lines = [line for line in previous.splitlines() if line and line != "(none)"] + _turn_lines(prompt)
    while len(lines) > 1 and count_text("\n".join(lines)) > max_tokens:
        lines.pop(0)
    return "\n".join(lines) or "Nothing of note."


def extraction_reply(prompt: str, invented: str) -> str:
    """An invented booking reference's fact first, then the removed user turns' and tool results' facts."""
    facts: list[dict[str, str]] = [
        {"type": "event", "text": f"The booking reference is {invented}.", "key": "booking reference"}
    ]
    for seq, (role, body) in enumerate(_removed_turns(prompt)):
        if role == "user":
            facts.append({"type": "fact", "text": _first_sentence(body, SUMMARY_LINE_CHARS), "key": f"said {seq}"})
        elif role == "tool":
            facts.append({"type": "fact", "text": body[:TOOL_FACT_CHARS], "key": f"tool result {seq}"})
    return orjson.dumps({"facts": [fact for fact in facts if fact["text"]]}).decode()


class StandInModel(OpenAIServer):
    """The stand-in's server: answers summary merges and extractions as the module says, anything else with a
    short text; counts what it answered and remembers every reference it invented."""

    path = "chat/completions"

    def __init__(self) -> None:
        super().__init__("ok", 0.0)
        self._guard = threading.Lock()
        self._invented: list[str] = []
        self.answered = {"summary": 0, "extraction": 0, "other": 0}

    def invented(self) -> frozenset[str]:
        """Every reference invented so far (the server answers from its own threads)."""
        with self._guard:
            return frozenset(self._invented)

    def answer(self, body: dict[str, Any]) -> dict[str, Any]:
        messages = body.get("messages") or [{}, {}]
        system, prompt = (str(message.get("content", "")) for message in (messages[0], messages[-1]))
        if system.startswith(SUMMARY_INSTRUCTIONS[:60]):
            kind, text = "summary", summary_reply(prompt, int(body.get("max_tokens") or 256))
        elif system.startswith(EXTRACTION_INSTRUCTIONS[:60]):
            with self._guard:
                self._invented.append(f"QZ{len(self._invented) + 1:06d}")
                invented = self._invented[-1]
            kind, text = "extraction", extraction_reply(prompt, invented)
        else:
            kind, text = "other", "Nothing of note."
        with self._guard:
            self.answered[kind] += 1
        return completion(text, str(body.get("model") or STAND_IN_MODEL))


def with_stand_in(settings: Settings, model: StandInModel) -> Settings:
    """`settings` with the LLM path on, asking `model`, on topics of their own."""
    return settings.model_copy(
        update={
            "topic_prefix": f"{settings.topic_prefix}-llm",
            "openai_base_url": model.base_url,
            "openai_api_key": SecretStr(STAND_IN_MODEL),
            "llm_model": STAND_IN_MODEL,
        }
    )
