"""Every word turnstream itself writes into a context or a prompt, one table per language.

A new language is one `Locale` in `LOCALES` (and a `Language` value): the compactor's marker and
summary/facts block, the rolling summary's line labels, the memory block, recalled-turn speakers,
dates, and the small-talk words all read their words from here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date
from types import MappingProxyType

from turnstream.text.language import Language


def _frozen(table: dict[str, str]) -> Mapping[str, str]:
    return MappingProxyType(table)


@dataclass(frozen=True, slots=True)
class Locale:
    """The words of one language."""

    marker: str
    """Says that the middle of the conversation was compressed (the compactor's marker message)."""
    summary_heading: str
    """Heads the rolling summary in the summary/facts block."""
    facts_heading: str
    """Heads the key facts in the summary/facts block."""
    fact_labels: Mapping[str, str]
    """Fact type (fact, preference, event, constraint, failure) -> its label in the block."""
    trim_note: str
    """Ends a message cut to fit; `{tokens}` is how many tokens went."""
    summary_labels: Mapping[str, str]
    """Rolling summary line prefixes by role (user, assistant, step, tool) and the words of a step line
    (called, failed)."""
    memory_title: str
    """First line of the memory block in a prompt."""
    profile_heading: str
    memories_heading: str
    turns_heading: str
    """Heads the archived turns recalled into the memory block."""
    memory_labels: Mapping[str, str]
    """Memory type (fact, preference, event, summary) -> its label in the memory block."""
    memory_label: str
    """How a memory's label opens its line; `{label}` is the label."""
    speakers: Mapping[str, str]
    """Role (user, assistant, tool) -> the speaker of a recalled turn that has no name."""
    tool_turn: str
    """Who a recalled tool result is from and when: `{speaker}`, `{step}` (its position in its conversation) and
    `{time}` (HH:MM, UTC, the day being its heading's)."""
    day: str
    """A calendar day, formatted with the date as `{0}`."""
    month: str
    """A calendar month, formatted with its first day as `{0}`."""
    date_note: str
    """The date a relative time word meant, written after the word; `{date}` is the date."""
    result_unavailable: str
    """The tool result a session gives a call whose result never arrived, so the provider's pairing rule holds."""
    small_talk: tuple[str, ...]
    """Greetings, thanks, farewells and acknowledgements: a short message made only of these asks nothing."""
    praise: tuple[str, ...]
    """Praise, sympathy and agreement: a sentence made only of these and small talk ("Wow, that's so inspiring,
    Mel!") tells a recalled turn's reader nothing."""
    spaced: bool
    """Whether the language puts spaces between words (small talk is then matched word by word)."""
    request_cue: str | None
    """A regular expression (matched on lower-cased text) that marks a request even in a short greeting."""

    def day_text(self, day: date) -> str:
        return self.day.format(day)

    def month_text(self, year: int, month: int) -> str:
        """The month `month` of `year`; months past 12 or before 1 roll into the next or previous years."""
        year, month = year + (month - 1) // 12, (month - 1) % 12 + 1
        return self.month.format(date(year, month, 1))


LOCALES: Mapping[Language, Locale] = MappingProxyType(
    {
        "zh": Locale(
            # Solon's SummarizationInterceptor text, verbatim.
            marker="--- [系统提示：中间部分历史对话已优化压缩，请根据当前计划和剩余历史继续任务...] ---",
            summary_heading="[已压缩历史摘要]",
            facts_heading="[关键信息]",
            fact_labels=_frozen(
                {"fact": "事实", "preference": "偏好", "event": "事件", "constraint": "约束", "failure": "失败尝试"}
            ),
            trim_note="[… 已截断 {tokens} 个 token …]",
            summary_labels=_frozen(
                {
                    "user": "用户：",
                    "assistant": "助手：",
                    "step": "步骤：",
                    "tool": "工具：",
                    "called": "调用",
                    "failed": "失败",
                }
            ),
            memory_title="[关于用户的记忆：相关时参考，不要复述]",
            profile_heading="用户画像：",
            memories_heading="相关记忆：",
            turns_heading="以往对话摘录：",
            memory_labels=_frozen({"fact": "事实", "preference": "偏好", "event": "事件", "summary": "往期对话"}),
            memory_label="（{label}）",
            speakers=_frozen({"user": "用户", "assistant": "助手", "tool": "工具"}),
            tool_turn="{speaker}（第{step}步，{time}）",
            day="{0.year}年{0.month}月{0.day}日",
            month="{0.year}年{0.month}月",
            date_note="（{date}）",
            result_unavailable="[此工具调用的结果未送达（被拒绝或丢失）；请按调用失败处理。]",
            small_talk=tuple(
                """
            你好 您好 哈喽 嗨 哈罗 早上好 早安 早 上午好 中午好 下午好 晚上好 晚安 在吗 在不在 在么
            谢谢 多谢 感谢 谢啦 谢了 好的 好 嗯 嗯嗯 哦 噢 哈 呵 嘿 再见 拜拜 回头见 明天见
            辛苦了 没事 没关系 不客气 你在干嘛 最近怎么样 最近好吗 吃了吗 你好吗 大家好 亲 小助手 机器人
            啊 呀 吧 呢 哇 哟 嘛 啦 了 的 你 您 我 们 也 还 很 挺 都
            """.split()
            ),
            praise=tuple(
                "太好了 真好 真棒 真不错 不错 厉害 好厉害 太棒了 棒 加油 哇塞 羡慕 可爱 好看 漂亮 同意 对 是的 没错 确实 真的 开心 高兴 为你高兴 太 真".split()
            ),
            spaced=False,
            request_cue=None,
        ),
        "en": Locale(
            marker=(
                "--- [System note: the middle of this conversation was compressed; continue the task "
                "from the current plan and the remaining history.] ---"
            ),
            summary_heading="[Summary of the compressed history]",
            facts_heading="[Key facts]",
            fact_labels=_frozen(
                {
                    "fact": "fact",
                    "preference": "preference",
                    "event": "event",
                    "constraint": "constraint",
                    "failure": "failed attempt",
                }
            ),
            trim_note="[… trimmed {tokens} tokens …]",
            summary_labels=_frozen(
                {
                    "user": "user: ",
                    "assistant": "assistant: ",
                    "step": "step: ",
                    "tool": "tool: ",
                    "called": "called",
                    "failed": "failed",
                }
            ),
            memory_title="[Memory about the user: use it where it helps, do not recite it]",
            profile_heading="Profile:",
            memories_heading="Relevant memories:",
            turns_heading="From earlier conversations:",
            memory_labels=_frozen(
                {"fact": "fact", "preference": "preference", "event": "event", "summary": "earlier conversation"}
            ),
            memory_label="({label}) ",
            speakers=_frozen({"user": "User", "assistant": "Assistant", "tool": "Tool"}),
            tool_turn="{speaker} (step {step}, {time})",
            day="{0.day} {0:%B} {0.year}",
            month="{0:%B} {0.year}",
            date_note=" ({date})",
            result_unavailable="[No result arrived for this tool call (it was refused or lost); treat the call as failed.]",
            small_talk=tuple(
                """
            hi hii hiii hey heya hello helo hallo howdy yo sup hiya greetings morning afternoon evening night
            good gm gn thanks thank thx ty cheers ok okay k kk cool nice great awesome bye goodbye cya later see
            you u ya there all folks how's hows how are r doing going it what's whats up is everything
            fine well alright sounds lol haha hah hmm yes yeah yep nope sure welcome so much lot again
            dear friend buddy pal mate bot assistant again soon take care a the and to day have
            """.split()
            ),
            praise=tuple(
                """
            wow oh omg amazing fantastic wonderful incredible beautiful lovely gorgeous stunning impressive brilliant
            cute fun blast glad happy proud hear sound love really super totally absolutely definitely exciting
            excited interesting inspiring inspire inspired support means mean appreciate agree true right exactly
            keep congrats congratulations job luck best pretty just like look looks kind words
            """.split()
            ),
            spaced=True,
            request_cue=(
                r"\b(?:what(?:'s| is| are) (?:the|my|your|a)|why|which|where|when|who|how (?:much|many|long|far|do|can)|"
                r"can you|could you|would you|please|tell me|remind me|help)\b"
            ),
        ),
    }
)
"""The words of every language turnstream speaks."""
