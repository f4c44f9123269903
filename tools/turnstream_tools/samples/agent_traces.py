"""Agent trajectories to develop on: tool-using agents' logs in several domains, deterministic by seed.

Each trace reads as a published agent log does (tau-bench's style): a system message with a long policy, a user
who states a task in several turns, and OpenAI-format assistant tool calls whose results are nested JSON. The
user picks among results by what they say (the later flight, the hotel in Asakusa, the order with the boots), so
the ids a later call passes come from a tool result read 5–30 messages before it. Between the steps run the
user's questions and the agent's explanations; reads run in parallel; calls fail and are retried; a record read
again after a change supersedes the earlier read; and tool-call ids repeat within a conversation as real logs'
do (frameworks that number calls per message or per turn, a retry sent under its failed call's id).

Nothing here follows turnstream's rules: the traces are what an agent's gateway would produce.
"""

from __future__ import annotations

import json
import random
import string
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from turnstream.compaction import validate_messages
from turnstream.text.chat import Message
from turnstream.text.language import Language
from turnstream_tools.samples.agent_domains import BUILDERS

DOMAINS: tuple[tuple[str, Language], ...] = tuple(BUILDERS)
"""Every (domain, language) the generator writes."""

CALL_ID_SCHEMES = ("random", "per_message", "per_turn")
"""How a framework names its tool calls: OpenAI's random ids (a retry resent under its failed call's id), numbered
within each assistant message (`call_0`, `call_1`: every message reuses them), or numbered within each user turn."""


@dataclass(frozen=True)
class AgentTrace:
    """One agent conversation: OpenAI chat messages, valid in order."""

    id: str
    domain: str
    language: Language
    messages: list[Message]

    @property
    def user_id(self) -> str:
        """The trace's user, the owner of its memories when it is replayed through a worker."""
        return f"{self.id}-user"


Call = tuple[str, dict[str, Any], Any]
"""(tool name, arguments, result): a result that is a string is sent as it is (an error text), anything else as
JSON."""


class Log:
    """An agent's log as it is written: messages appended in order, tool-call ids named as the log's framework
    names them."""

    def __init__(self, rng: random.Random, scheme: str) -> None:
        self.rng = rng
        self.scheme = scheme
        self.messages: list[Message] = []
        self.turn_calls = 0
        self.last_ids: list[str] = []

    def system(self, text: str) -> None:
        self.messages.append({"role": "system", "content": text})

    def user(self, text: str) -> None:
        self.messages.append({"role": "user", "content": text})
        self.turn_calls = 0

    def say(self, text: str) -> None:
        self.messages.append({"role": "assistant", "content": text})

    def chat(self, exchanges: list[tuple[str, str]]) -> None:
        """User questions and the agent's answers, in turn."""
        for question, answer in exchanges:
            self.user(question)
            self.say(answer)

    def call(self, *calls: Call, thought: str | None = None, retry: bool = False) -> None:
        """One assistant message with `calls` (parallel when more than one) and their results in order. A `retry`
        under the random scheme is resent under the failed call's id, as some frameworks do."""
        if retry and self.scheme == "random":
            ids = self.last_ids[: len(calls)]
        else:
            ids = [self._new_id(index) for index in range(len(calls))]
        self.last_ids = ids
        self.messages.append(
            {
                "role": "assistant",
                "content": thought,
                "tool_calls": [
                    {
                        "id": call_id,
                        "type": "function",
                        "function": {"name": name, "arguments": json.dumps(args, ensure_ascii=False)},
                    }
                    for call_id, (name, args, _) in zip(ids, calls)
                ],
            }
        )
        for call_id, (_, _, result) in zip(ids, calls):
            content = result if isinstance(result, str) else json.dumps(result, ensure_ascii=False)
            self.messages.append({"role": "tool", "tool_call_id": call_id, "content": content})

    def _new_id(self, index: int) -> str:
        if self.scheme == "per_message":
            return f"call_{index}"
        if self.scheme == "per_turn":
            self.turn_calls += 1
            return f"tool_{self.turn_calls}"
        alphabet = string.ascii_letters + string.digits
        return "call_" + "".join(self.rng.choice(alphabet) for _ in range(24))


Builder = Callable[[Log, random.Random, Language], None]


def agent_trace(domain: str, language: Language = "en", seed: int = 0) -> AgentTrace:
    """One trace of `domain` in `language`, the same for the same seed."""
    if (domain, language) not in DOMAINS:
        raise ValueError(f"no {language} traces of {domain!r}: one of {DOMAINS}")
    rng = random.Random(f"{domain}/{language}/{seed}")
    log = Log(rng, rng.choice(CALL_ID_SCHEMES))
    BUILDERS[domain, language](log, rng, language)
    validate_messages(log.messages)
    return AgentTrace(f"{domain}-{language}-{seed}", domain, language, log.messages)


def agent_traces(per_domain: int = 3, seed: int = 0) -> list[AgentTrace]:
    """`per_domain` traces of every (domain, language) in DOMAINS, seeds `seed`, `seed` + 1, ..."""
    return [agent_trace(domain, language, seed + index) for domain, language in DOMAINS for index in range(per_domain)]
