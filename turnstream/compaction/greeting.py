"""Greeting and small-talk detection (English and Chinese): such turns need no memory recall."""

from __future__ import annotations

import re

MAX_SMALL_TALK_CHARS = 40
"""Longer messages carry content even when they open with a greeting."""

_EN_WORDS = re.compile(r"[a-z']+")
_EN_SMALL_TALK = frozenset(
    """
    hi hii hiii hey heya hello helo hallo howdy yo sup hiya greetings morning afternoon evening night
    good gm gn thanks thank thx ty cheers ok okay k kk cool nice great awesome bye goodbye cya later see
    you u ya there all folks how's hows how are r doing going it what's whats up is everything
    fine well alright sounds lol haha hah hmm yes yeah yep nope sure welcome so much lot again
    dear friend buddy pal mate bot assistant again soon take care a the and to day have
    """.split()
)
_EN_CONTENT_CUE = re.compile(
    r"\b(?:what(?:'s| is| are) (?:the|my|your|a)|why|which|where|when|who|how (?:much|many|long|far|do|can)|"
    r"can you|could you|would you|please|tell me|remind me|help)\b"
)

_ZH_SMALL_TALK = re.compile(
    r"^(?:你好|您好|哈喽|嗨|哈罗|早上好|早安|早|上午好|中午好|下午好|晚上好|晚安|在吗|在不在|在么|"
    r"谢谢|多谢|感谢|谢啦|谢了|好的|好|嗯|嗯嗯|哦|噢|哈|呵|嘿|再见|拜拜|回头见|明天见|"
    r"辛苦了|没事|没关系|不客气|你在干嘛|最近怎么样|最近好吗|吃了吗|你好吗|大家好|亲|小助手|机器人|"
    r"啊|呀|吧|呢|哇|哟|嘛|啦|了|的|你|您|我|们|也|还|很|挺|都)+$"
)
_PUNCTUATION_AND_EMOJI = re.compile(r"[\s\W_]+", re.UNICODE)


def _is_english_small_talk(text: str) -> bool:
    words = _EN_WORDS.findall(text.lower())
    if not words or len(words) > 8:
        return False
    return all(word in _EN_SMALL_TALK for word in words)


def _is_chinese_small_talk(text: str) -> bool:
    letters = _PUNCTUATION_AND_EMOJI.sub("", text)
    return bool(letters) and _ZH_SMALL_TALK.match(letters) is not None


def is_small_talk(text: str | None) -> bool:
    """True for a short greeting, thanks, farewell or acknowledgement with no request in it."""
    if not text:
        return True
    stripped = text.strip()
    if len(stripped) > MAX_SMALL_TALK_CHARS or _EN_CONTENT_CUE.search(stripped.lower()):
        return False
    if not _PUNCTUATION_AND_EMOJI.sub("", stripped):
        return True  # only emoji or punctuation
    return _is_english_small_talk(stripped) or _is_chinese_small_talk(stripped)
