"""The marker, the summary/facts block and the rolling summary speak one language, judged by one rule."""

import pytest

from turnstream.compaction.compactor import compact
from turnstream.compaction.strategies.summary import RollingSummarizer
from turnstream.text.language import detect_language
from turnstream.text.locale import LOCALES
from turnstream.text.tokens import count_messages

pytestmark = pytest.mark.unit

MIXED = "我想订京都酒 can you do it for me by the way"


def test_a_mixed_sentence_gets_the_same_language_from_the_marker_and_the_summary() -> None:
    messages = [{"role": "system", "content": "You are a travel agent."}, {"role": "user", "content": MIXED}]
    for n in range(8):
        messages.append({"role": "assistant", "content": f"Option {n}: a ryokan near Gion, checking availability now."})
        messages.append({"role": "user", "content": MIXED})
    result = compact(messages, count_messages(messages) // 2, strategy=RollingSummarizer())
    assert result.marker_index is not None
    assert result.messages[result.marker_index]["content"] == LOCALES["zh"].marker
    labels = LOCALES["zh"].summary_labels
    summary_lines = result.summary.splitlines()
    assert summary_lines and all(line.startswith((labels["user"], labels["assistant"])) for line in summary_lines)
    summary_language = "zh" if summary_lines[0].startswith(tuple(LOCALES["zh"].summary_labels.values())) else "en"
    assert detect_language(messages) == result.language == summary_language == "zh"
