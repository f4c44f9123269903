"""The recall tool's pure parts, shared by every shape of it (OpenAI Agents SDK, LangChain, a plain chat completions
request): its name, description and JSON Schema, the checks of a model's arguments, and the tool result as text.

The agent searches its owner's archived turns and typed memories with a query of its own, as the seed's "recall
history" tool searches the archive like a search engine. A tool result dropped from the context comes back whole (cut
only past the budget), with its step and time, found by any id in it: the agent reads it again instead of calling
the tool again. The search is the one `turnstream memory search`, the HTTP API and the MCP server make (prompt/read.py's
search, through ContextClient.search or GatewayMemory.search); the owner is fixed where the tool is built and is no
argument, so a model can never read another user's memory. No I/O here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import orjson

from turnstream.errors import TurnstreamError
from turnstream.prompt.assemble import Prompt
from turnstream.text.chat import content_text

NAME = "recall_history"
DESCRIPTION = (
    "Search everything this user said in earlier conversations and what is remembered about them (facts, preferences, "
    "events). Call it when the user refers to something said before that the conversation shown to you no longer "
    'contains ("the hotel we picked", "what did I tell you about my sister?", "like last time"), or when an '
    "answer depends on their history; not for what the conversation already shows. Also finds an earlier tool "
    "result by any id, code or reference number in it (a booking id, a payment method, a flight number): read it "
    "again this way instead of calling the tool again. Returns what is remembered about the user and the "
    "best-matching earlier turns with the turns around them, under the day each was said, with its speaker (a tool "
    "result whole, with its step and time), oldest first; or a line saying nothing matched (then try other words "
    "once)."
)
QUERY_DESCRIPTION = (
    "What to look for, as the words the earlier turns would contain: the topic in the user's own words, with names, "
    'places, numbers and dates ("Biscuit greyhound adopted", "Lisbon hotel budget May"), or the id as written '
    '("voucher_5518230", "KX4Q2P"), not a whole question.'
)
BUDGET_DESCRIPTION = "How many tokens the result may take (default {default}); more for a broad topic."
MEMORIES_DESCRIPTION = "How many remembered facts, preferences and events to include at most (default {default})."

MIN_BUDGET_TOKENS = 100
MAX_BUDGET_TOKENS = 4000
"""The result's bounds whatever a model asks: enough for a few dated turns, never a context's worth."""
DEFAULT_BUDGET_TOKENS = 1000
MAX_MEMORIES = 10
DEFAULT_MEMORIES = 3
"""settings.recall_k's default: what a prompt's memory block gives."""
MAX_QUERY_CHARS = 500
"""A longer query is a pasted message, not search words: the model is asked for the words instead."""
NOTHING_FOUND = "Nothing in the earlier conversations matches this query."
ARGUMENTS = ("query", "budget_tokens", "max_memories")
NON_BLANK = r"\S"
"""The query's pattern: OpenAI's strict mode takes `pattern` on strings, not `minLength`."""


def parameters() -> dict[str, Any]:
    """The arguments' JSON Schema, valid in OpenAI's strict mode (every property required, the optional ones
    nullable): a fresh dict, since the frameworks rewrite the one they are given."""
    return {
        "type": "object",
        "properties": {
            "query": {"type": "string", "pattern": NON_BLANK, "description": QUERY_DESCRIPTION},
            "budget_tokens": {
                "type": ["integer", "null"],
                "minimum": MIN_BUDGET_TOKENS,
                "maximum": MAX_BUDGET_TOKENS,
                "description": BUDGET_DESCRIPTION.format(default=DEFAULT_BUDGET_TOKENS),
            },
            "max_memories": {
                "type": ["integer", "null"],
                "minimum": 0,
                "maximum": MAX_MEMORIES,
                "description": MEMORIES_DESCRIPTION.format(default=DEFAULT_MEMORIES),
            },
        },
        "required": list(ARGUMENTS),
        "additionalProperties": False,
    }


def chat_tool() -> dict[str, Any]:
    """The tool as a chat completions request's `tools` entry."""
    return {
        "type": "function",
        "function": {"name": NAME, "description": DESCRIPTION, "parameters": parameters(), "strict": True},
    }


@dataclass(frozen=True, slots=True)
class RecallArgs:
    """A model's arguments, checked."""

    query: str
    budget_tokens: int
    max_memories: int


class BadArguments(TurnstreamError, ValueError):
    """Arguments a model got wrong; its message is what the model is told instead of a result."""


def parse_arguments(raw: str | bytes | Mapping[str, Any]) -> RecallArgs:
    """The arguments of a tool call (its JSON text, or the object a framework already parsed), checked against
    the schema's rules; BadArguments with a short reason otherwise. A null or missing optional one takes its default."""
    arguments = _object(raw)
    unknown = sorted(set(arguments) - set(ARGUMENTS))
    if unknown:
        raise BadArguments(f"unknown argument {', '.join(unknown)}; the arguments are {', '.join(ARGUMENTS)}")
    query = arguments.get("query")
    if not isinstance(query, str) or not query.strip():
        raise BadArguments("query must be a non-empty string: the words to look for")
    if len(query) > MAX_QUERY_CHARS:
        raise BadArguments(f"query is over {MAX_QUERY_CHARS} characters: give the key words, names and dates only")
    budget = _bounded(arguments, "budget_tokens", MIN_BUDGET_TOKENS, MAX_BUDGET_TOKENS, DEFAULT_BUDGET_TOKENS)
    memories = _bounded(arguments, "max_memories", 0, MAX_MEMORIES, DEFAULT_MEMORIES)
    return RecallArgs(query.strip(), budget, memories)


def _object(raw: str | bytes | Mapping[str, Any]) -> Mapping[str, Any]:
    if isinstance(raw, Mapping):
        return raw
    try:
        parsed = orjson.loads(raw or b"{}")  # a call without arguments sends "" (some models): no query, said below
    except orjson.JSONDecodeError:
        parsed = None
    if not isinstance(parsed, dict):
        raise BadArguments('the arguments must be one JSON object, e.g. {"query": "Lisbon hotel budget"}')
    return parsed


def _bounded(arguments: Mapping[str, Any], name: str, low: int, high: int, default: int) -> int:
    value = arguments.get(name)
    if value is None:
        return default
    # JSON true is no count, though Python's bool is an int; 500.0 is how some models write 500
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise BadArguments(f"{name} must be a whole number from {low} to {high}, or null")
    return value


def error_text(error: BadArguments) -> str:
    """The tool result for arguments a model got wrong: the reason, so it can call again right."""
    return f"Error: {error}"


def render(found: Prompt) -> str:
    """The tool result: the memory block the search laid out within its budget (the owner's profile, the matching
    memories, the matching turns with their neighbours under the day each was said, with its speaker, in time
    order, all in the query's language); a line saying so when no memory and no turn matched."""
    if not found.recalled and not found.archived:
        return NOTHING_FOUND
    # a search has no session: its messages are the block and the query, nothing else is a system message
    return next((content_text(m.get("content")) for m in found.messages if m.get("role") == "system"), NOTHING_FOUND)
