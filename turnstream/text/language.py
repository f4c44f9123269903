"""The language of a conversation, by one rule: the user's own text first, Han characters against Latin letters."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, Literal

from turnstream.text.chat import content_text

Language = Literal["zh", "en"]
"""The languages turnstream speaks; each has a `Locale` (text/locale.py)."""

HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
LATIN = re.compile(r"[A-Za-z]")


class LanguageTally:
    """Running counts of Han characters and Latin letters; O(message) per update, O(1) to read.

    User text decides when there is any, since system prompts and tool output are often English
    even when the user speaks Chinese. Tool results never count.
    """

    __slots__ = ("counts",)

    def __init__(self, counts: Sequence[int] = (0, 0, 0, 0)) -> None:
        self.counts = list(counts)
        """[user Han, user Latin, other Han, other Latin]."""

    def add(self, message: Any) -> None:
        """Count one message (anything but a dict with a role other than "tool" counts nothing)."""
        if not isinstance(message, dict) or message.get("role") in ("tool", None):
            return
        self.add_text(content_text(message.get("content")), user=message["role"] == "user")

    def add_text(self, text: str, user: bool) -> None:
        """Count a text said by the user (`user`) or by anyone else."""
        offset = 0 if user else 2
        self.counts[offset] += len(HAN.findall(text))
        self.counts[offset + 1] += len(LATIN.findall(text))

    def language(self) -> Language:
        han, latin = self.counts[0:2] if any(self.counts[0:2]) else self.counts[2:4]
        # A Han character carries about a word; an English word is about four letters.
        return "zh" if han and han * 4 >= latin else "en"


def detect_language(messages: Sequence[Any]) -> Language:
    """The language of a conversation (or of any span of it): Chinese ("zh") or English ("en")."""
    tally = LanguageTally()
    for message in messages:
        tally.add(message)
    return tally.language()


def text_language(text: str) -> Language:
    """The language of one text of the user's, by the same rule."""
    tally = LanguageTally()
    tally.add_text(text, user=True)
    return tally.language()
