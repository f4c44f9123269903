import pytest

from turnstream.compaction import validate_messages
from turnstream.compaction.messages import call_ids
from turnstream.text.greeting import is_small_talk
from turnstream_tools.samples.conversations import Sample, load_samples, stating_index

SAMPLES = {s.id: s for s in load_samples()}
SIZES = {"travel_agent": (60, 100), "companion_zh": (80, 150), "support_corrections": (40, 80)}
LANGUAGES = {"travel_agent": "en", "companion_zh": "zh", "support_corrections": "en"}


def test_the_three_samples_ship() -> None:
    assert sorted(SAMPLES) == sorted(SIZES)


@pytest.mark.parametrize("name", sorted(SIZES))
def test_sample_is_valid_and_sized(name: str) -> None:
    sample = SAMPLES[name]
    validate_messages(sample.messages)
    low, high = SIZES[name]
    assert low <= len(sample.messages) <= high
    assert sample.language == LANGUAGES[name]
    assert sample.messages[0]["role"] == "system" and sample.messages[1]["role"] == "user"


@pytest.mark.parametrize("name", sorted(SIZES))
def test_planted_facts_are_stated_early_with_their_probes(name: str) -> None:
    sample = SAMPLES[name]
    assert len(sample.planted_facts) >= 5
    for fact in sample.planted_facts:
        assert fact.slot in {"fact", "preference", "constraint", "event", "failure"}
        index = stating_index(fact, sample.messages)
        assert index is not None, fact
        assert index < len(sample.messages) / 3, fact


@pytest.mark.parametrize("name", sorted(SIZES))
def test_variant_rows_align_and_occur(name: str) -> None:
    sample = SAMPLES[name]
    text = str(sample.messages)
    assert sample.variants
    for axis in sample.variants:
        assert len(axis) >= 3 and len({len(row) for row in axis}) == 1, axis
        for spelling in axis[0]:
            assert spelling in text, spelling
        assert not any('"' in s or "\\" in s for row in axis for s in row)


def _tool_results(sample: Sample) -> list[str]:
    return [m["content"] for m in sample.messages if m["role"] == "tool"]


def test_travel_agent_has_parallel_calls_long_results_and_a_retry() -> None:
    sample = SAMPLES["travel_agent"]
    assert max(len(call_ids(m)) for m in sample.messages) >= 3
    assert sum(len(r.encode()) > 2048 for r in _tool_results(sample)) >= 4
    failed = next(i for i, m in enumerate(sample.messages) if m["role"] == "tool" and '"error"' in m["content"])
    failed_call = next(m for m in reversed(sample.messages[:failed]) if call_ids(m))
    name = failed_call["tool_calls"][0]["function"]["name"]
    assert any(c["function"]["name"] == name for m in sample.messages[failed + 1 :] for c in m.get("tool_calls") or ())
    # the thought right before a call (semantic completion) and one inside a call message both occur
    assert any(
        m["role"] == "assistant" and m["content"].startswith("Thought") and call_ids(n)
        for m, n in zip(sample.messages, sample.messages[1:])
    )
    assert any(call_ids(m) and m["content"] for m in sample.messages)


def test_travel_agent_user_changes_a_constraint_midway() -> None:
    messages = SAMPLES["travel_agent"].messages
    late = [m["content"] for m in messages[len(messages) // 2 :] if m["role"] == "user"]
    assert any("May 16" in text for text in late)


def test_companion_has_greetings_and_later_questions_on_early_facts() -> None:
    sample = SAMPLES["companion_zh"]
    users = [m["content"] for m in sample.messages if m["role"] == "user"]
    assert sum(is_small_talk(text) for text in users) >= 5
    assert {"早上好", "晚安"} <= {g for g in ("你好", "早上好", "晚安") for text in users if g in text}
    second_half = " ".join(m["content"] or "" for m in sample.messages[len(sample.messages) // 2 :])
    recalled = [f for f in sample.planted_facts if all(p in second_half for p in f.probes)]
    assert len(recalled) >= 4


def test_support_user_corrects_earlier_facts() -> None:
    sample = SAMPLES["support_corrections"]
    users = [m["content"] for m in sample.messages if m["role"] == "user"]
    assert sum(any(w in text.lower() for w in ("actually", "correction", "sorry")) for text in users) >= 3
    tools = {c["function"]["name"] for m in sample.messages for c in m.get("tool_calls") or ()}
    assert {"lookup_order", "create_refund", "update_address"} <= tools
