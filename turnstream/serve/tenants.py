"""Bearer tokens and the tenant each one acts for: parsed from the tokens file, resolved in constant time.

A token maps to exactly one tenant. Resolution compares the presented token with every configured one
(hmac.compare_digest over SHA-256 digests, so every comparison has the same length and none stops early):
how long a request takes says nothing about which token, or how much of one, it got right.
"""

from __future__ import annotations

import hashlib
import hmac
import re
from collections.abc import Iterable
from dataclasses import dataclass

import orjson

from turnstream.errors import TurnstreamError
from turnstream.schemas.turn import SAFE_TENANT

MIN_TOKEN_CHARS = 16
"""A shorter token is refused at start: a guessable secret is worse than none, which refuses to start."""
_TENANT = re.compile(SAFE_TENANT)


class TokenFileError(TurnstreamError, ValueError):
    """The tokens cannot be used; the message says where and why, never the token itself."""


@dataclass(frozen=True, slots=True)
class TokenTable:
    """Digests of the configured tokens, each with its tenant."""

    entries: tuple[tuple[bytes, str], ...]

    @classmethod
    def of(cls, pairs: Iterable[tuple[str, str]]) -> TokenTable:
        """A table from (token, tenant) pairs; TokenFileError for a short or repeated token or a bad tenant."""
        entries: dict[bytes, str] = {}
        for number, (token, tenant) in enumerate(pairs, 1):
            if len(token) < MIN_TOKEN_CHARS:
                raise TokenFileError(f"token {number} is shorter than {MIN_TOKEN_CHARS} characters")
            if not _TENANT.match(tenant) or len(tenant) > 64:
                raise TokenFileError(f"token {number}: tenant {tenant!r} is not 1-64 of [A-Za-z0-9._-]")
            digest = _digest(token)
            if digest in entries:
                raise TokenFileError(f"token {number} is given twice")
            entries[digest] = tenant
        if not entries:
            raise TokenFileError("no token configured")
        return cls(tuple(entries.items()))

    @property
    def tenants(self) -> frozenset[str]:
        return frozenset(tenant for _, tenant in self.entries)

    def resolve(self, presented: str) -> str | None:
        """The tenant of `presented`, or None; compares with every entry whatever matched."""
        digest = _digest(presented)
        found = None
        for known, tenant in self.entries:
            if hmac.compare_digest(digest, known):
                found = tenant
        return found


def _digest(token: str) -> bytes:
    return hashlib.sha256(token.encode()).digest()


def bearer(authorization: str) -> str | None:
    """The token of an `Authorization: Bearer <token>` header, or None for any other header."""
    scheme, _, value = authorization.strip().partition(" ")
    if scheme.lower() != "bearer":
        return None
    return value.strip() or None


def parse_tokens_file(text: str) -> list[tuple[str, str]]:
    """(token, tenant) pairs of a tokens file: a JSON object {token: tenant}, or lines `token tenant`
    (blank lines and `#` comments skipped)."""
    if text.lstrip().startswith("{"):
        try:
            data = orjson.loads(text)
        except orjson.JSONDecodeError as error:
            raise TokenFileError(f"not valid JSON: {error}") from None
        if not all(isinstance(k, str) and isinstance(v, str) for k, v in data.items()):
            raise TokenFileError("the JSON object must map each token (a string) to its tenant (a string)")
        return list(data.items())
    pairs = []
    for number, line in enumerate(text.splitlines(), 1):
        words = line.split("#", 1)[0].split()
        if not words:
            continue
        if len(words) != 2:
            raise TokenFileError(f"line {number}: expected `TOKEN TENANT`, got {len(words)} word(s)")
        pairs.append((words[0], words[1]))
    return pairs


def parse_inline_tokens(text: str) -> list[tuple[str, str]]:
    """(token, tenant) pairs of TURNSTREAM_SERVE_TOKENS: `token=tenant,token=tenant`."""
    pairs = []
    for number, item in enumerate(filter(None, (part.strip() for part in text.split(","))), 1):
        token, sep, tenant = item.rpartition("=")
        if not sep or not token or not tenant:
            raise TokenFileError(f"TURNSTREAM_SERVE_TOKENS item {number}: expected TOKEN=tenant")
        pairs.append((token.strip(), tenant.strip()))
    return pairs


def token_table(file_text: str | None, inline: str | None) -> TokenTable | None:
    """The tokens of the tokens file and of TURNSTREAM_SERVE_TOKENS together; None when neither is given."""
    if file_text is None and inline is None:
        return None
    pairs = [
        *(parse_tokens_file(file_text) if file_text is not None else []),
        *(parse_inline_tokens(inline) if inline is not None else []),
    ]
    return TokenTable.of(pairs)
