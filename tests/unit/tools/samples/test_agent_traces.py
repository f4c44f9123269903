"""The agent traces: valid, long, deterministic, and holding what real agent logs hold."""

from __future__ import annotations

import json
from collections import Counter
from functools import cache

import pytest

from turnstream.compaction import validate_messages
from turnstream.text.chat import content_text, tool_calls
from turnstream.text.tokens import count_message, count_messages
from turnstream_tools.benchmarks.agent_values import needed_values
from turnstream_tools.samples.agent_traces import DOMAINS, AgentTrace, agent_trace, agent_traces

SEEDS = range(4)


@cache
def traces() -> list[AgentTrace]:
    return agent_traces(per_domain=len(SEEDS))


def test_every_domain_and_language_is_written() -> None:
    assert {domain for domain, _ in DOMAINS} == {"travel", "retail", "telecom", "banking", "incident", "coding"}
    assert {language for _, language in DOMAINS} == {"en", "zh"}
    assert Counter((t.domain, t.language) for t in traces()) == dict.fromkeys(DOMAINS, len(SEEDS))


@pytest.mark.parametrize(("domain", "language"), DOMAINS)
def test_a_trace_is_the_same_for_a_seed_and_differs_between_seeds(domain: str, language: str) -> None:
    assert agent_trace(domain, language, 7) == agent_trace(domain, language, 7)  # type: ignore[arg-type]
    assert agent_trace(domain, language, 7).messages != agent_trace(domain, language, 8).messages  # type: ignore[arg-type]


def test_unknown_domains_are_refused() -> None:
    with pytest.raises(ValueError, match="no zh traces"):
        agent_trace("coding", "zh")


def test_traces_are_valid_long_and_open_with_a_long_policy() -> None:
    for trace in traces():
        validate_messages(trace.messages)
        assert trace.messages[0]["role"] == "system"
        assert 1500 <= count_message(trace.messages[0]) <= 4000, trace.id
        assert 60 <= len(trace.messages) <= 200, (trace.id, len(trace.messages))
        assert 7000 <= count_messages(trace.messages) <= 30000, (trace.id, count_messages(trace.messages))
    policies = [t.messages[0]["content"] for t in traces()]
    assert len(set(policies)) == len(policies)


def test_tool_results_are_nested_json_objects_and_lists() -> None:
    for trace in traces():
        depths = []
        for message in trace.messages:
            if message["role"] == "tool" and message["content"].lstrip().startswith(("{", "[")):
                depths.append(_depth(json.loads(message["content"])))
        assert max(depths) >= 3, trace.id


def _depth(value: object) -> int:
    if isinstance(value, dict):
        return 1 + max(map(_depth, value.values()), default=0)
    if isinstance(value, list):
        return 1 + max(map(_depth, value), default=0)
    return 0


def test_later_calls_pass_ids_a_tool_result_gave_many_messages_before() -> None:
    for trace in traces():
        far = 0
        for index, message in enumerate(trace.messages):
            if not message.get("tool_calls"):
                continue
            for value in needed_values(trace.messages, index).values:
                first = next(i for i, m in enumerate(trace.messages[1:], 1) if value in _text(m))
                far += trace.messages[first]["role"] == "tool" and index - first >= 5
        assert far >= 3, trace.id


def test_calls_run_in_parallel_fail_and_are_retried() -> None:
    for trace in traces():
        calls = [m for m in trace.messages if m.get("tool_calls")]
        assert any(len(m["tool_calls"]) >= 2 for m in calls), trace.id
        failed = [
            i
            for i, m in enumerate(trace.messages)
            if m["role"] == "tool" and (m["content"].startswith("Error") or '"error"' in m["content"])
        ]
        retried = 0
        for index in failed:  # made again, corrected, later on (a refusal by policy may stand)
            name, arguments = _call_of(trace, index)
            again = [c for m in trace.messages[index + 1 :] for c in tool_calls(m) if c[1] == name]
            retried += any(args != arguments for _, _, args in again)
        assert retried, trace.id


def _call_of(trace: AgentTrace, index: int) -> tuple[str, str]:
    """(name, arguments) of the call whose result is at `index`: the latest call under its id."""
    wanted = trace.messages[index]["tool_call_id"]
    for message in reversed(trace.messages[:index]):
        for call_id, name, arguments in tool_calls(message):
            if call_id == wanted:
                return name, arguments
    raise AssertionError(f"no call for the result at {index}")


def test_tool_call_ids_repeat_within_a_conversation() -> None:
    for trace in traces():
        ids = Counter(call_id for m in trace.messages for call_id, _, _ in tool_calls(m))
        assert max(ids.values()) >= 2, trace.id


def test_a_record_is_read_again_after_it_changed() -> None:
    for trace in traces():
        reads = Counter(
            (name, args)
            for m in trace.messages
            for _, name, args in tool_calls(m)
            if name.startswith(("get_", "query_"))
        )
        assert max(reads.values(), default=0) >= 2 or trace.domain == "coding", trace.id
    coding = [t for t in traces() if t.domain == "coding"]
    for trace in coding:  # a file is read again after a failed patch
        paths = Counter(args for m in trace.messages for _, name, args in tool_calls(m) if name == "read_file")
        assert len(paths) < sum(paths.values()) or any("start" in args for args in paths), trace.id


def test_the_chinese_trip_is_the_tokyo_and_seoul_one() -> None:
    [zh] = [t for t in traces() if t.language == "zh"][:1]
    text = "\n".join(_text(m) for m in zh.messages)
    for said in ("CA929", "TYO-10477", "就住浅草那家", "好，现在把机票和酒店都订了", "海鲜过敏"):
        assert said in text


def _text(message: dict[str, object]) -> str:
    return content_text(message.get("content")) + "".join(args for _, _, args in tool_calls(message))
