"""Offline key-information extraction: typed, keyed, deduplicated facts from a dropped span."""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from functools import lru_cache
from typing import Any, get_args

from turnstream.compaction.fitting import (
    DATA_KEY,
    ENTITY_KEY,
    FAILED_CALL_KEY,
    MODEL_KEY,
    eviction_order,
    fact_value,
)
from turnstream.compaction.strategies.base import Digest, Fact, FactType
from turnstream.compaction.strategies.tooldata import (
    FAILURE,
    RESULT_ARROW,
    TOOL_CALL_CHARS,
    digest_tool_result,
    render_arguments,
)
from turnstream.text.chat import Message, content_text, tool_calls
from turnstream.text.prose import clauses, keywords, sentences, shorten
from turnstream.text.terms import CJK_RUN, stem

log = logging.getLogger(__name__)

MAX_FACT_CHARS = 200
SUMMARY_RESULT_CHARS = 160
"""A tool result as a summary's step line tells it: the first of its ids and values."""

_MONEY = r"(?:[$€£¥]\s?\d|\d[\d,.]*\s?(?:k\b|元|块|欧|美元|eur\b|euros?\b|dollars?\b|usd\b|rmb\b|yuan\b))"
_LIMIT = (
    r"(?:\bat most\b|\bunder\b|\bno more than\b|\bmax(?:imum)?\b|\bup to\b|\blimit\b|\bcap\b|超过|最多|以内|封顶|上限)"
)
"""An amount of money with a limit is a budget, whether or not the word is said."""

# Slots that hold one value each: a restatement or a correction of the slot replaces the old entry.
# (key, default type, trigger) — triggers are cues, not templates: they match inside any phrasing.
_SLOT_CUES: tuple[tuple[str, FactType, str], ...] = (
    ("name", "fact", r"\bmy name\b|\bcall me\b|\bi'?m called\b|\bname['’]s\b|我叫|叫我|我的名字|我姓"),
    ("allergy", "constraint", r"allerg|过敏"),
    # Money and a limit on one line: looked for from each line's start only, which finds the same pair as
    # looking from every position would (`.` stops at a line's end), without rescanning the line from each.
    ("budget", "constraint", rf"\bbudget\b|\bafford\b|预算|(?m:^(?=.*{_MONEY})(?=.*{_LIMIT}))"),
    ("diet", "constraint", r"\bvegetarian\b|\bvegan\b|\bhalal\b|\bkosher\b|\bgluten[- ]free\b|吃素|素食|清真"),
    (
        "home city",
        "fact",
        r"\bi live\b|\bi'?m based\b|\bi'?m from\b|\bliving in\b|\bmoved to\b|\bhome ?town\b|\bhome city\b|住在|我住|我家在|我来自|我在\S{1,6}(?:生活|住)|搬到|搬去",
    ),
    (
        "occupation",
        "fact",
        r"\bi work (?:as|at|for)\b|\bmy (?:job|profession) (?:is|as|at|for|in|with)\b|\bby (?:profession|trade)\b|\bfor a living\b|我是(?:一名|一位|一个)|我的职业|我在\S{1,10}(?:工作|上班)",
    ),
    ("age", "fact", r"\bi'?m \d{1,3} (?:years?|yrs?)\b|\bmy age\b|\bi turned \d|我\s*(?:今年)?\s*\d{1,3}\s*岁|我今年"),
    (
        "party size",
        "constraint",
        r"\b(?:\d+|two|three|four|five|six|seven|eight) (?:of us|people|persons|adults|travell?ers|guests)\b|\bparty of\b|(?:\d+|[两三四五六七八九十])\s*(?:个人|位)|一共\S{0,3}人",
    ),
    ("deadline", "constraint", r"\bdeadline\b|\bdue (?:by|on)\b|截止|最晚"),
)
_SLOTS: tuple[tuple[str, FactType, re.Pattern[str]], ...] = tuple(
    (key, kind, re.compile(pattern, re.I)) for key, kind, pattern in _SLOT_CUES
)

# "my X is …" / "我的X是…": the subject slot names the key, so "my seat preference is…" restated or corrected collides.
# After a verb's -ing form or a preposition, "my X" is an object, not the subject: "Losing my job was a bummer",
# "riding with my dad when I was a kid" and "unemployment in our community was" set no slot.
_MY_SLOT_EN = re.compile(
    r"(?<!ing\s)(?<!\bin\s)(?<!\bof\s)(?<!\bon\s)(?<!\bat\s)(?<!\bto\s)(?<!\bby\s)(?<!\bfor\s)(?<!\bwith\s)(?<!\bfrom\s)(?<!\babout\s)"
    r"\b(?:my|our)\s+((?:[a-z][a-z'\-]*\s+){0,3}?[a-z][a-z'\-]*)\s+(?:is|are|was|were|will be|would be|should be|has to be|stays?|remains?|=)\b",
    re.I,
)
_KIN_ZH = "妹妹|姐姐|哥哥|弟弟|妈妈|爸爸|妈|爸|父母|老婆|老公|丈夫|妻子|女儿|儿子|孩子|男朋友|女朋友|朋友|同事|室友"
"""Whom "我" owns without "的" ("我妹妹"): Chinese drops it before kin, as before the home ("我家")."""
_MY_SLOT_ZH = re.compile(
    rf"我(?:的|们的)(?!意思)([\u4e00-\u9fff]{{1,6}}?)(?:是|为|叫|改成|改为|定在|定为|在)|我们?((?:{_KIN_ZH}|家)(?:的[\u4e00-\u9fff]{{1,3}}?)?)(?:是|叫)"
)
_KIN_EN = (
    r"sister|brother|mom|mum|mother|dad|father|parents|wife|husband|partner|son|daughter|kids?|child(?:ren)?"
    r"|friend|colleague|boss|manager|roommate|boyfriend|girlfriend|grandma|grandpa|grandmother|grandfather"
    r"|aunt|uncle|cousin|niece|nephew"
)
_SOMEONE_ELSES = re.compile(
    rf"(?<!and\s)\b(?:my|our)\s+(?:\w+\s+)?({_KIN_EN})\b(?:'s)?(?!\s+and\s+i\b)|(?<![和跟与])我们?({_KIN_ZH})(?![和跟与]我)",
    re.I,
)
"""Someone of the speaker's own ("my brother", "我哥哥") a personal slot before it belongs to, not the speaker."""
_PERSONAL = frozenset({"name", "allergy", "diet", "home city", "occupation", "age"})
_SPEAKER_CUE = re.compile(r"i\b|i'|my\b|call me|我", re.I)
"""A slot cue that names the speaker ("I live", "my job", "我住"): the slot is the speaker's whoever else the clause names."""
_OPINION = re.compile(
    r"\s*(?:not\s+)?(?:so|really|very|such|pretty|super|too|quite|truly|always)\b"
    r"|\s*(?:the\s+)?(?:most\s+)?(?:key|important|special|crucial|essential|everything|amazing|awesome|great|cool|cute|fun|hard|tough"
    r"|beautiful|wonderful|incredible|best)\b",
    re.I,
)
"""What follows "my X is" when it judges rather than tells ("…is so special", "…is key"): an opinion, no value of a slot."""
_SLOT_FILLER = frozenset({"new", "actual", "real", "total", "current", "main", "usual", "own", "favorite", "favourite"})
_NOT_IN_A_SLOT = frozenset(
    {"and", "or", "but", "when", "while", "if", "because", "so", "since", "that", "who", "i", "we", "you"}
)
"""Words that end a noun phrase: "my progress and stay motivated" names no slot "progress and"."""
_EXCLAIMED = re.compile(r"\bhow\s+[a-z]+\s+$", re.I)
"""What comes before an exclamation's subject ("how special our bonds are"): a judgement, no slot."""

_PREFERENCE = re.compile(
    r"\b(?:like|love|prefer|preferably|enjoy|adore|hate|dislike|avoid|can't stand|cannot stand|detest|fond of|into|favou?rite|rather"
    r"|want|wants)\b"
    r"|不喜欢|喜欢|偏好|更喜欢|讨厌|避开|避免|爱吃|爱喝|不爱|最爱|倾向|宁愿|受不了|不吃|不喝|吃不了|想要",
    re.I,
)
_CONSTRAINT = re.compile(
    r"\b(?:must|mustn't|need to|needs to|have to|has to|can't|cannot|can not|do not|don't|never|no more than|not more than"
    r"|at most|at least|maximum|max|minimum|under|below|less than|within|up to|no later than|required|requires?|without|strictly"
    r"|need|needs|always|only)\b|^\s*(?:no|nothing)\s+(?!(?:thanks|thank|thx|else|worries|problem|prob|way|idea)\b)\w+"
    r"|必须|不能|不要|不可以|最多|最少|至少|不超过|不得|务必|一定要|只能|以内|之内|以下|之前|别|需要|总是|只要",
    re.I,
)
_OWN_VERBS = ("like", "love", "want", "wants", "rather", "need", "needs", "always", "never", "don't", "do not")
"""Loose cue words that count when the speaker says them of themselves ("I'd love", "my kids need")."""
_AMOUNT_CUES = ("under", "below", "max", "up to")
"""Cue words that limit an amount ("under 2000", "max 8", "up to 4 people"), and are as often something else ("Max", our
dog; "waking up to nature")."""
_LOOSE_CUES = frozenset({*_OWN_VERBS, "into", *_AMOUNT_CUES})
"""Cue words as often something else ("looks like", "love and support", "into a reality", "kids who need one", "isn't
always easy", "tough times don't last", "below the horizon"): a cue only as the speaker's own verb, at a clause's start
(an instruction: "Don't book hostels"), or before an amount."""
_NOT_AN_INSTRUCTION = r"(?!\s+(?:feel|think|know|get|mind|worry|care|believe|understand|\w*[^e\W]ed|saw|knew|thought|was|were|been|had|got|felt)\b)"
"""After "never" or "don't" at a clause's start: a feeling or a past ("Don't feel like it", "Never saw this coming"),
not an instruction."""
_OWN_CUE = re.compile(
    rf"^\s*(?:need|always|(?:never|don't|do not){_NOT_AN_INSTRUCTION})\b"
    r"|\b(?:i|we|my|our)(?:'d)?\s+(?:(?!(?:not|isn't|wasn't|aren't|weren't|feel|feels|felt|look|looks|looked|seem|seems"
    r"|sound|sounds|stuff|things|something)\b)[a-z']+\s+){0,2}"
    rf"(?:{'|'.join(_OWN_VERBS)})\b(?=\s+\w)"
    r"|\b(?:i'm|we're|i am|we are)\s+(?:[a-z]+\s+)?into\b"
    rf"|\b(?:{'|'.join(_AMOUNT_CUES)})\s+(?:[$€£¥]\s?)?\d",
    re.I,
)
_DECISION = re.compile(
    r"\blet(?:'s| us) (?:go with|do|book|take|pick|use)\b|\b(?:i|we)(?:'ve| have)? decided\b"
    r"|\b(?:i|we)(?:'ll| will| shall) (?:take|go with|book)\b"
    r"|\bgo with\b|\bbook (?:it|that|the)\b|\b(?:booked|reserved|confirmed|scheduled|ordered|purchased|cancell?ed)\b"
    r"|决定|就选|就订|就这么定|选定|已预订|已预定|已确认|已下单|订好了|订在|已取消|定了",
    re.I,
)
_PICK = re.compile(
    r"就(?:住|买|坐)|选(?!哪|什么)[^，。,.!?！？\s]{1,24}吧(?![？?])|(?:要|订|选|住)(?:第[一二三四五六七八九十\d]+[个家班]|那[个家班]|这[个家班])"
)
"""A pick among what was shown ("选CA929吧", "就住浅草那家", "要第二个"): a fact of the user's, as the data it names."""
_DATE = re.compile(
    r"\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.? \d{1,2}\b|\b\d{1,2} (?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)"
    r"|\b(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday|tomorrow|tonight|next (?:week|month|year))\b"
    r"|\b\d{4}-\d{2}-\d{2}\b|\b\d{1,2}/\d{1,2}\b|\b\d{1,2}(?::\d{2})? ?(?:am|pm)\b"
    r"|\d{1,2}\s*[月号日]|周[一二三四五六日天](?![部个本只件次种位条张家气])|星期[一二三四五六日天]|明天|后天|下周|下个月|明年|今晚",
    re.I,
)
_NUMBER = re.compile(
    r"\d|(?!一[个次点天人晚])[一二两三四五六七八九十百千万]+\s*(?:元|块|岁|个|人|天|晚|小时|分钟|公里|次|点)"
)
"""A number: digits, or a Chinese numeral before its measure; a lone 一 before one ("一个", "一点") is "a", not one."""
_FIRST_PERSON = re.compile(r"\b(?:i|i'm|i've|i'd|i'll|my|me|mine|we|we're|our|us)\b|我", re.I)
_VALUE = re.compile(r"\d[\d,.]*\d|\d")
"""A number as written: "2,500", "3.5", "7"."""
_NEW_VALUE_CUES = (
    r"\bmake (?:that|it) (?:[$€£¥]\s?)?\d|\bchange (?:that|it) to\b|\bi meant (?:[$€£¥]\s?)?\d|改成|改为|换成"
)
_NEW_VALUE_ALONE = r"^\W*(?:actually|sorry|correction|no)\W+(?:[$€£¥]\s?)?\d[\d,.]*\W*$"
_NEW_VALUE = re.compile(_NEW_VALUE_CUES + "|" + _NEW_VALUE_ALONE, re.I)
"""A correction that gives a new value and says nothing else ("make that 2,500", "Sorry, 5."): only such a
sentence may re-value a slot it does not name; "Actually I have 2 kids" states a fact of its own."""
_STOPPED = r"\bno longer\b|(?:\bnot|n't)\b[^,.;!?]{0,30}\bany ?more\b|不再"
"""A statement that something the speaker said before holds no more ("I no longer eat sushi", "我不再喝咖啡")."""
_STOPPED_CUE = re.compile(_STOPPED, re.I)
_MEANT = r"\bi meant\b|我是说|我的意思是"
"""A correction that names only the new value ("Oops, I meant aisle seats"): it corrects what was just said."""
_CUE_PHRASES = (
    r"\bchanged? (?:my|our) minds?\b|\bon second thoughts?\b|\bscratch that\b|\brather than\b"
    r"|改主意|更正|其实|纠正|说错|而是|" + _MEANT
)
"""Correction cues of more than one word, or in Chinese."""
_OPENER = r"(?:no|nope|oops|wait|不对|等等|哦不)"
_OPENERS = rf"^\W*{_OPENER}(?:\W*{_OPENER})*\s*[,，!！—–-]"
"""A correction's opening word before a comma: "No, I prefer aisle seats", "No wait, …", "Oops, …", "不对，…"."""
_ONLY_OPENERS = re.compile(rf"^\W*{_OPENER}(?:\W*{_OPENER})*\W*$", re.I)
"""A clause that is the opening word alone ("No wait"): it says nothing of its own."""
_CORRECTION_CUES = (
    r"\bactually\b|\bcorrection\b|\binstead\b|\bupdate\b|\bnot\s+\$?\d|\bnot\s+[^,.;!?]{1,40}?\s+but\b|"
    + _CUE_PHRASES
    + "|"
    + _STOPPED
    + "|"
    + _NEW_VALUE_CUES  # a new value alone corrects too
)
"""A correction's cues anywhere in a sentence."""
_CORRECTION_OPENINGS = _OPENERS + "|" + _NEW_VALUE_ALONE
"""A correction's cues that open the sentence: an opening word, or a new value alone."""
_CORRECTION = re.compile(_CORRECTION_CUES + "|" + _CORRECTION_OPENINGS, re.I)
_CUE_STARTS = "acimnorsu改更其纠说而我不换"
"""The first character of every cue of `_CORRECTION_CUES`: checked before its alternatives are tried one by one
at each position of a sentence, it makes the search about 2.5 times faster, on the hot path of every fact."""
_CORRECTION_ANYWHERE = re.compile(rf"(?=[{_CUE_STARTS}])(?:{_CORRECTION_CUES})", re.I)
_CORRECTION_OPENING = re.compile(_CORRECTION_OPENINGS, re.I)


def corrects(sentence: str) -> bool:
    """Whether `sentence` holds a correction's cue: `_CORRECTION.search`, faster."""
    return bool(_CORRECTION_OPENING.match(sentence) or _CORRECTION_ANYWHERE.search(sentence))


_CUE_WORDS = re.compile(_CUE_PHRASES + r"|\bno longer\b|\bany ?more\b|不再", re.I)
"""Words of a correction's cue that no keyword says what a statement is about by ("changed my mind", "anymore")."""
OLD_VALUE = re.compile(
    r"\b(?:not|instead of|rather than)\s+((?:(?!\bbut\b)[^,.;!?]){1,40})|(?:而不是|不是)([^，。；！？,]{1,12})", re.I
)
"""The value a correction names as wrong: "not aisle seats", "instead of Rome", "not 2000 but…", "不是上海"."""
_QUESTION = re.compile(r"[?？]\s*$|[吗呢]\s*[？?]?\s*$")
_REACTION = re.compile(
    r"\b(?:can'?t wait|cannot wait|let (?:me|you) know|must(?:'ve| have) (?:been|felt|had|taken)|good luck|no worries|don't worry"
    r"|sounds? (?:great|good|amazing|fun|awesome)|enjoy your|take care|(?:here|there) for you|count on (?:me|us|them|you)"
    r"|must be (?:so |really |pretty |super )?(?:awesome|amazing|great|fun|hard|tough|challenging|difficult|nice|cool|exciting"
    r"|scary|rewarding|special|wonderful|incredible)|(?:love|like) (?:that|how) you|(?:tell|show|ask) you\b"
    r"|love to (?:see|check|hear|read) (?:it|them|that|this|those|more)|check (?:it|them) out|couldn'?t (?:agree|have done it)"
    r"|no matter what)\b"
    r"|太好了|真棒|加油|等不及|别担心",
    re.I,
)
"""A reaction to what the other side said, or a pleasantry ("Must be awesome!", "I love that you chose pottery", "I
couldn't agree more", "Enjoy your day!"): no information about the speaker, whatever cue it holds."""
_CONDITION = re.compile(r"^\s*(?:if|unless|in case)\b|^\s*(?:如果|要是|假如)", re.I)
"""A clause that opens with a condition ("If I need anything, I'll reach out"): the clause after it says what holds,
with the condition as its context."""
_FRAGMENT = re.compile(r"^[a-z]|^[,;，；、]")
"""A clause that starts inside a sentence ("quiet, I need…"): the sentence states it better."""
_PREFIX = re.compile(r"^(?:\[\d{4}-\d{2}-\d{2}\] )?(?:[^\s:：]{1,40}[:：] ?)?")
"""The date and speaker a fact's text may open with (`[2023-05-08] Maya: `)."""
# A capitalised word after a lower-case one: a name, not the start of a sentence.
_ENTITY = re.compile(r"(?<=[a-z0-9,'’]\s)[A-Z][a-zA-Z]+|《[^》]+》|(?:名字叫|名叫|叫做)[\u4e00-\u9fff]{1,4}")
"""A name: capitalised after a lower-case word, a title in 《》, or what something is called (叫饼干)."""
_NAMED = re.compile(r"名字叫|名叫|叫做")
"""What something is called ("名字叫饼干", a pet's or a child's name): a fact whoever the sentence's subject is."""

_REMEMBERED_TEXTS = 8192
"""Clauses whose class, and fact texts whose keywords, are remembered: a user message is read when it
arrives (the user's facts) and again when it leaves the window, each reading runs up to twenty cue
patterns over every clause, and each new statement is compared with every fact kept."""


def merge_facts(existing: Sequence[Fact], new: Iterable[Fact], max_facts: int) -> tuple[Fact, ...]:
    """Existing facts updated by new ones: a key seen again is replaced (and becomes newest); the cap evicts the least valuable, oldest first."""
    merged: dict[str, Fact] = {f.key: f for f in existing}
    for fact in new:
        merged.pop(fact.key, None)
        merged[fact.key] = fact
    facts = list(merged.values())
    if len(facts) > max_facts:
        evicted = set(eviction_order(facts)[: len(facts) - max_facts])
        facts = [f for i, f in enumerate(facts) if i not in evicted]
    return tuple(facts)


def merge_model_facts(existing: Sequence[Fact], found: Iterable[Fact], max_facts: int) -> tuple[Fact, ...]:
    """`merge_facts` of a model's `found` facts: one under a key the session holds replaces that fact (a restatement
    or a correction, as the extraction prompt asks), any other takes its key under MODEL_KEY, so it ranks below
    every offline fact (fitting.MODEL_VALUE)."""
    known = {fact.key for fact in existing}
    keyed = (fact if fact.key in known else replace(fact, key=MODEL_KEY + fact.key) for fact in found)
    return merge_facts(existing, keyed, max_facts)


def _is_cue(word: str) -> bool:
    """Whether a keyword is a cue ("prefer", "must", "actually") rather than what a statement is about."""
    return any(cue.fullmatch(word) for cue in (_PREFERENCE, _CONSTRAINT, _CORRECTION))


def slug(text: str, n: int = 3) -> str:
    """A short stable identity of `text`: its first meaningful keywords, cue words removed."""
    keys = [k for k in keywords(OLD_VALUE.split(text)[0]) if not _is_cue(k)]
    return "-".join(keys[:n]) or shorten(text.lower(), 24)


def _subject_slot(clause: str) -> str | None:
    """The attribute a clause sets, from "my X is" / "我的X是", filler words removed."""
    match = _MY_SLOT_EN.search(clause)
    if match and (_OPINION.match(clause, match.end()) or _EXCLAIMED.search(clause, 0, match.start())):
        return None
    if match:
        words = match.group(1).lower().replace("'s", "").split()
        if _NOT_IN_A_SLOT.intersection(words):
            return None
        slot = [w for w in words if w not in _SLOT_FILLER]
        return " ".join(slot) or None
    match = _MY_SLOT_ZH.search(clause)
    return (match.group(1) or match.group(2)) if match else None


def _slot_owner(clause: str, cue: re.Match[str], key: str) -> str:
    """The slot a cue sets, for whom: "brother home city" for "My brother moved to Valparaiso", so that a kin's
    move, allergy or job never overwrites the speaker's own."""
    if key not in _PERSONAL or _SPEAKER_CUE.match(cue.group()):
        return key
    other = _SOMEONE_ELSES.search(clause, 0, cue.start())
    return f"{(other.group(1) or other.group(2)).lower()} {key}" if other else key


def _after(pattern: re.Pattern[str], clause: str) -> str:
    """Text after the first match of `pattern`: the object of a preference verb; the clause when nothing with a
    keyword follows ("闻到就受不了。" ends at the cue: "。" must not become a key every such clause shares)."""
    match = pattern.search(clause)
    return clause[match.end() :] if match and keywords(clause[match.end() :]) else clause


@lru_cache(maxsize=_REMEMBERED_TEXTS)
def classify(clause: str, role: str) -> tuple[FactType, str] | None:
    """(type, key) of the key information a clause carries, or None for small talk, questions and prose."""
    for key, kind, trigger in _SLOTS:
        if match := trigger.search(clause):
            return kind, _slot_owner(clause, match, key)
    if _REACTION.search(clause):
        return None  # "I couldn't agree more" is no failure
    if FAILURE.search(clause):
        return "failure", "failure:" + slug(clause)
    if _DECISION.search(clause):
        return "event", "decision:" + slug(clause)
    if role != "user":
        return None
    if _PICK.search(clause) and not _QUESTION.search(clause):
        return "fact", "fact:" + slug(clause)
    is_question = bool(_QUESTION.search(clause))
    if _cued(_PREFERENCE, clause) and (_FIRST_PERSON.search(clause) or not is_question):
        return "preference", "pref:" + slug(_after(_PREFERENCE, clause))
    if _cued(_CONSTRAINT, clause):
        return "constraint", "constraint:" + slug(clause)
    if is_question:
        return None
    slot = _subject_slot(clause)
    if slot:
        return "fact", slot
    if _DATE.search(clause):
        return "event", "event:" + slug(clause)
    if _NAMED.search(clause) or (CJK_RUN.search(clause) and _NUMBER.search(clause) and not _NEW_VALUE.search(clause)):
        return "fact", "fact:" + slug(clause)  # Chinese drops the subject: "房东说房租要涨到四千五百元"
    if _FIRST_PERSON.search(clause) and (_NUMBER.search(clause) or _ENTITY.search(clause)):
        return "fact", "fact:" + slug(clause)
    return None


def _cued(cue: re.Pattern[str], clause: str) -> bool:
    """Whether `cue` marks `clause`: one of its words that means one thing, or a loose one (`_LOOSE_CUES`) said as the
    speaker's own verb ("I'd love", "we never", "my kids need"), at a clause's start, or before an amount."""
    hits = {match.group(0).lower() for match in cue.finditer(clause)}
    if hits - _LOOSE_CUES:
        return True
    for match in _OWN_CUE.finditer(clause) if hits else ():
        said = match.group(0).lower()
        if any(said.endswith(hit) or said.startswith(hit) for hit in hits):
            return True
    return False


def _similar_key(text: str, kind: FactType, facts: Sequence[Fact], correcting: bool) -> str | None:
    """Key of the newest fact of the same type whose keywords overlap `text` (Jaccard): a restatement shares most of
    them, a correction ("Actually, I prefer window seats") a quarter of what both are about, cue words aside."""
    words, threshold = (content_words, 0.25) if correcting else (_fact_keywords, 0.6)
    mine = words(text)
    if not mine:
        return None
    for fact in reversed(facts):
        if fact.type != kind:
            continue
        theirs = words(fact.text)
        if theirs and len(mine & theirs) / len(mine | theirs) >= threshold:
            return fact.key
    return None


def _split_old_values(sentence: str, facts: Sequence[Fact], role: str) -> tuple[list[Fact], list[Fact]]:
    """(kept, removed): removed facts state a value this correction names as wrong ("not 2000", "instead of Rome",
    "不是上海"), among those the speaker's word may change."""
    kept, removed = list(facts), []
    for match in OLD_VALUE.finditer(sentence):
        old = set(keywords(match.group(1) or match.group(2) or ""))
        if old:
            removed += [f for f in kept if _changes(role, f) and old <= _fact_keywords(f.text)]
            kept = [f for f in kept if f not in removed]
    return kept, removed


def _changes(role: str, fact: Fact) -> bool:
    """Whether what `role` says may correct `fact`: the user's word changes the user's facts, the others' their own."""
    return fact.key.startswith(_NOT_THE_USERS) != (role == "user")


def _names_old_value(clause: str) -> bool:
    """Whether a clause only names the value a correction replaces ("not aisle seats", "不是成都")."""
    return bool(OLD_VALUE.match(clause))


def _says_something(clause: str) -> bool:
    """Whether a clause holds a word besides a correction's cue ("Actually", "Correction", "No" say nothing)."""
    return any(not _CORRECTION.fullmatch(word) for word in keywords(clause))


def _corrected_spans(sentence: str, parts: Sequence[str]) -> dict[int, str]:
    """Clause index -> the correction's own words, that clause with the old value it names: "I prefer window seats,
    not aisle seats" ("Y, not X"), "Not aisle seats but window seats" and "不是成都，而是重庆" (the value after)."""
    starts, at = [], 0
    for part in parts:
        at = sentence.find(part, at)
        starts.append(at)
        at += len(part)
    spans: dict[int, tuple[int, int]] = {}
    for index, part in enumerate(parts):
        if not _names_old_value(part):
            continue
        before, after = index - 1, index + 1
        if before >= 0 and not _names_old_value(parts[before]) and _says_something(parts[before]):
            partner = before
        elif after < len(parts) and not _names_old_value(parts[after]):
            partner = after
        else:
            continue
        first, last = spans.get(partner, (partner, partner))
        spans[partner] = (min(first, index), max(last, index))
    return {index: sentence[starts[first] : starts[last] + len(parts[last])] for index, (first, last) in spans.items()}


def _stopped_fact(clause: str, facts: Sequence[Fact], role: str) -> Fact | None:
    """The newest earlier fact a "no longer" clause takes back ("I no longer eat sushi" of "I love sushi"): half the
    words of the shorter of the two, cue words aside, are in both."""
    mine = content_words(clause)
    for fact in reversed(facts):
        theirs = content_words(fact.text)
        if _changes(role, fact) and mine and theirs and 2 * len(mine & theirs) >= min(len(mine), len(theirs)):
            return fact
    return None


def _claim_keys(found: Sequence[Fact], replaced: Sequence[Fact]) -> list[Fact]:
    """`found` with the keys of the facts a correction removed: the statement of the new value takes the key of the
    value it replaces (same type first, else the first statement with a generic key the newest removed one's), so
    the old fact, its memory and its profile line are rewritten, not kept beside it."""
    left = [fact for fact in replaced if fact.key not in {f.key for f in found}]
    claimed = list(found)
    for index, fact in enumerate(claimed):
        match = next((old for old in reversed(left) if old.type == fact.type), None) if ":" in fact.key else None
        if match:
            left.remove(match)
            claimed[index] = replace(fact, key=match.key)
    if len(left) == len(replaced) and left:
        unkeyed = next((i for i, fact in enumerate(claimed) if ":" in fact.key), None)
        if unkeyed is not None:
            claimed[unkeyed] = replace(claimed[unkeyed], key=left[-1].key)
    return claimed


def _restated_value(sentence: str, facts: Sequence[Fact], seq: int) -> list[Fact]:
    """A new value alone ("Actually, make that 2500.", "No, 2500."): the user's newest fact with one number
    takes the sentence's one number, in its own words ("My budget is 2500 euros."); nothing when either is
    ambiguous."""
    values = _VALUE.findall(sentence)
    if len(values) != 1:
        return []
    for fact in reversed(facts):
        if fact.type not in ("constraint", "fact", "preference") or fact.key.startswith(_NOT_THE_USERS):
            continue
        body = fact_body(fact.text)
        if len(_VALUE.findall(body)) == 1:
            return [Fact(type=fact.type, text=_VALUE.sub(values[0], body), key=fact.key, source_seq=seq)]
    return []


_MEANT_CUE = re.compile(_MEANT, re.I)
MEANT_REACH = 4
"""How far back (in messages) an "I meant …" reaches: the speaker's previous message, a reply between them."""


def _meant_fact(sentence: str, facts: Sequence[Fact], seq: int) -> Fact | None:
    """The fact an "I meant …" sentence corrects ("Oops, I meant aisle seats" of "I prefer window seats"): of the
    user's facts from the last MEANT_REACH messages, the one sharing most of what the sentence is about, the newest
    when none shares anything; None without such a cue or such a fact."""
    if not _MEANT_CUE.search(sentence):
        return None
    recent = [f for f in facts if not f.key.startswith(_NOT_THE_USERS) and seq - MEANT_REACH <= f.source_seq < seq]
    mine = content_words(sentence)
    return max(reversed(recent), key=lambda fact: len(mine & content_words(fact.text)), default=None)


_NOT_THE_USERS = (
    DATA_KEY,
    "failure:",
    *(f"{kind}:{role}-" for kind in get_args(FactType) for role in ("assistant", "tool", "system")),
)
"""Keys of facts the user's word does not change: tool results, failures, what the assistant said."""


def fact_body(text: str) -> str:
    """A fact's words, without the date and speaker it opens with."""
    said = _PREFIX.match(text)
    return text[said.end() if said else 0 :]


@lru_cache(maxsize=_REMEMBERED_TEXTS)
def _fact_keywords(text: str) -> frozenset[str]:
    """A fact's keywords, as a set; its date and speaker aside."""
    return frozenset(keywords(fact_body(text)))


@lru_cache(maxsize=_REMEMBERED_TEXTS)
def content_words(text: str) -> frozenset[str]:
    """What a statement is about: its keywords less cue words ("prefer", "actually", "no longer")."""
    return frozenset(stem(k) for k in _fact_keywords(_CUE_WORDS.sub(" ", text)) if not _is_cue(k))


def _has_subject(text: str) -> bool:
    """Whether a statement says who: a first person or a name, and it does not start mid-sentence."""
    return not _FRAGMENT.search(text) and bool(_FIRST_PERSON.search(text) or _ENTITY.search(text) or text[:1].isupper())


def _statement(clause_text: str, sentence: str) -> str:
    """The fact's words: the clause when it stands alone, else its whole sentence (its subject and the rest of it)."""
    return clause_text if _has_subject(clause_text) or len(sentence) > MAX_FACT_CHARS else sentence


def _said(message: dict[str, Any], ts: float | None) -> str:
    """How a fact opens: the date it was said (when known) and the speaker's name (when the message has one)."""
    name = message.get("name")
    speaker = f"{name.strip()}: " if isinstance(name, str) and name.strip() else ""
    day = f"[{datetime.fromtimestamp(ts, UTC):%Y-%m-%d}] " if ts is not None else ""
    return day + speaker


def tool_result_summary(content: str, limit: int = SUMMARY_RESULT_CHARS) -> tuple[str, bool]:
    """(the identifiers and values of a tool result within `limit` characters, whether it reports an error)."""
    digest = digest_tool_result(content, limit)
    return digest.text, digest.failed


class KeyInfoExtractor:
    """Extracts facts, preferences, constraints, events and failures without any model."""

    name = "keyinfo"

    def __init__(self, max_facts: int = 40) -> None:
        self.max_facts = max_facts

    def apply(self, digest: Digest, dropped: Sequence[Message], first_seq: int) -> Digest:
        try:
            facts = self.extract(digest.facts, dropped, first_seq, digest.times)
        except Exception:  # a strategy must never stop compaction; the old facts stay valid
            log.exception("key-info extraction failed; facts unchanged")
            return digest
        return replace(digest, facts=facts)

    def extract(
        self, facts: Sequence[Fact], dropped: Sequence[Message], first_seq: int, times: Sequence[float | None] = ()
    ) -> tuple[Fact, ...]:
        """The facts after folding in every message of `dropped` (said at `times`, when known), in order; each
        fact of prose opens with its date and speaker where those are known."""
        current = tuple(facts)
        # Each result answers the latest call of its id before it: frameworks reuse ids (`call_0` in every
        # message), so a later call's name must not relabel an earlier result.
        names: dict[str, list[str]] = {}
        for offset, message in enumerate(dropped):
            if not isinstance(message, dict):
                continue
            names.update((call_id, name_args) for call_id, *name_args in tool_calls(message))
            seq = first_seq + offset
            if message.get("role") == "tool":
                fact = self._tool_fact(message, names, seq)
                current = merge_facts(current, [fact] if fact else [], self.max_facts)
            else:
                said = _said(message, times[offset] if offset < len(times) else None)
                current = self._fold_prose(
                    current, content_text(message.get("content")), str(message.get("role", "")), seq, said
                )
        return current

    def _fold_prose(
        self, current: tuple[Fact, ...], text: str, role: str, seq: int, said: str = ""
    ) -> tuple[Fact, ...]:
        for sentence in sentences(text):
            if sentence.rstrip().endswith(("?", "？")):
                continue  # a question states nothing: "are we under budget?" must not take the budget's slot
            correcting = corrects(sentence)
            facts, replaced = _split_old_values(sentence, current, role) if correcting else (list(current), [])
            if correcting and not replaced and role == "user" and (meant := _meant_fact(sentence, facts, seq)):
                facts, replaced = [fact for fact in facts if fact is not meant], [meant]
            whole, taken = self._sentence_facts(sentence, role, seq, facts, replaced, correcting)
            replaced += [fact for fact in taken if fact not in replaced]
            if replaced:
                whole = _claim_keys(whole, replaced)
                if not whole and role == "user":  # a correction that drops a value is the slot's new statement
                    whole = [
                        Fact(
                            type=replaced[-1].type,
                            text=shorten(sentence, MAX_FACT_CHARS),
                            key=replaced[-1].key,
                            source_seq=seq,
                        )
                    ]
            elif not whole and role == "user" and _NEW_VALUE.search(sentence):
                whole = _restated_value(sentence, facts, seq)
            found = [replace(fact, text=said + fact.text) if said else fact for fact in whole]
            current = merge_facts(facts, found, self.max_facts)
        return current

    @staticmethod
    def _sentence_facts(
        sentence: str, role: str, seq: int, facts: list[Fact], replaced: list[Fact], correcting: bool
    ) -> tuple[list[Fact], list[Fact]]:
        """The statements of one sentence, each clause classified, a correction's in its own words; and the
        earlier facts a "no longer" clause of it takes back."""
        found: list[Fact] = []
        taken_back: list[Fact] = []
        context = ""
        parts = clauses(sentence)
        corrected = _corrected_spans(sentence, parts) if correcting else {}
        for index, clause in enumerate(parts):
            if correcting and _ONLY_OPENERS.match(clause):
                continue  # "No wait" opens the correction; what follows says it
            if correcting and _names_old_value(clause):
                continue  # "not 2000" names the wrong value, already removed; the clause it goes with says it
            if _CONDITION.match(clause) and index + 1 < len(parts):
                context = clause  # "If we need help, …" holds only with what follows it
                continue
            kind_key = classify(clause, role)
            taken = None  # the earlier fact this clause restates, by its own cue
            if correcting and _STOPPED_CUE.search(clause):
                taken = _stopped_fact(clause, facts, role)
                taken_back += [taken] if taken else []
            elif (
                kind_key is None
                and replaced
                and (index in corrected or _NUMBER.search(clause) or _ENTITY.search(clause))
            ):
                taken = replaced[-1]  # "make that 3000, not 2000": the new value takes the slot it corrects
            if taken is not None:
                kind_key = (kind_key[0] if kind_key else taken.type, taken.key)
            if kind_key is None:
                if found and role == "user" and len(clause) < 40 and not _QUESTION.search(clause):
                    # A trailing clause without a cue ("…; window please") completes the fact before it, unless
                    # that fact is already its whole sentence ("选CA929吧，便宜一点。" holds "便宜一点。").
                    if clause.strip() not in found[-1].text:
                        found[-1] = replace(found[-1], text=shorten(f"{found[-1].text}; {clause}", MAX_FACT_CHARS))
                else:
                    # A leading clause without a cue ("For the hotel") gives context to the next one.
                    context = clause if len(clause) < 40 else ""
                continue
            kind, key = kind_key
            if role != "user":
                # The user's own slots (budget, name…) change only by the user's word, and what the assistant says it
                # did or decided is its account, not the user's choice: its keys name it.
                key = f"{kind}:{role}-{key}" if ":" not in key else key.replace(":", f":{role}-", 1)
            own = corrected.get(index, clause)
            joined = f"{context}，{own}" if CJK_RUN.search(own) else f"{context}, {own}"
            text = shorten(joined if context else own, MAX_FACT_CHARS)
            context = ""
            if taken is not None:
                pass
            elif ":" in key:
                # Generic keys: a restatement or a correction of an earlier entry takes over its key.
                key = _similar_key(text, kind, facts + found, correcting) or key
            elif not _NUMBER.search(clause) and any(f.key == key and _NUMBER.search(fact_body(f.text)) for f in facts):
                continue  # "budget stays the same" names the slot but no value: the stated one stands
            found.append(Fact(type=kind, text=_statement(text, sentence), key=key, source_seq=seq))
        # one sentence, one statement: clauses of it that fell back to the whole sentence are one fact, and a
        # clause the sentence's fact already holds is not a second one
        unique: dict[str, Fact] = {}
        for fact in found:  # of clauses that give the same statement, the most valuable kind names it
            if fact.text not in unique or fact_value(fact) > fact_value(unique[fact.text]):
                unique[fact.text] = fact
        own_words = set(corrected.values())  # a correction's statement stays its own, whatever else the sentence says
        whole = [
            f
            for f in unique.values()
            if f.text in own_words
            or not any(f.text != g.text and _fact_keywords(f.text) < _fact_keywords(g.text) for g in unique.values())
        ]
        return whole, taken_back

    @staticmethod
    def _tool_fact(message: dict[str, Any], names: dict[str, list[str]], seq: int) -> Fact | None:
        """A tool result as data the agent acts on: keyed by the thing it is about, so a later result about the same
        thing (a reservation read again, an order cancelled) replaces it; a failed call as a failed attempt."""
        name, args = names.get(str(message.get("tool_call_id", "")), [str(message.get("name") or "tool"), ""])
        content = content_text(message.get("content"))
        if not content.strip():
            return None
        digest = digest_tool_result(content)
        arguments = render_arguments(args) if args else ""
        call = f"{name}({arguments})" if args else name
        # Keyed by every argument: searches of two dates are two facts, a call repeated alike replaces its result.
        if digest.failed:
            return Fact(
                type="failure",
                text=shorten(f"{call} failed: {digest.text}", MAX_FACT_CHARS + TOOL_CALL_CHARS),
                key=f"{FAILED_CALL_KEY}{name}:{arguments}",
                source_seq=seq,
            )
        key = f"{ENTITY_KEY}{digest.entity}" if digest.entity else f"{DATA_KEY}{name}:{arguments}"
        return Fact(type="fact", text=f"{call}{RESULT_ARROW}{digest.text}", key=key, source_seq=seq)
