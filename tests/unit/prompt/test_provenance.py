"""Every line of a prompt says where it came from, and every source it names is in the log it was built from."""

from __future__ import annotations

from typing import Any

import pytest

from turnstream.compaction.compactor import compact
from turnstream.compaction.strategies.offline import build_strategy
from turnstream.prompt.assemble import assemble
from turnstream.prompt.provenance import Source
from turnstream.schemas.archive import ArchiveEntry
from turnstream.schemas.context import ContextDoc
from turnstream.schemas.prompt_read import Recalled
from turnstream.settings import Settings
from turnstream.text.chat import content_text
from turnstream_tools.samples.agent_traces import agent_traces
from turnstream_tools.samples.conversations import generate_conversations

SESSION = "s1"


def _stored(history: list[dict[str, Any]], budget: int) -> ContextDoc:
    result = compact(history, budget, strategy=build_strategy(Settings()))
    return ContextDoc(session_id=SESSION, version=len(history), last_turn_id="t", updated_at=0.0, **result.to_dict())


def _settings(prompt: int, recall: int) -> Settings:
    return Settings().model_copy(update={"prompt_budget_tokens": prompt, "recall_budget_tokens": recall})


def _check(history: list[dict[str, Any]], stored: ContextDoc, question: str, settings: Settings) -> int:
    """Assemble with provenance and check each message's sources against `history`; how many sources were checked."""
    archive = [
        ArchiveEntry(f"e{p}", SESSION, p, "user", None, 0.0, content_text(m.get("content")))
        for p, m in enumerate(history[:6])
    ]
    memories = [Recalled("m1", "fact", "The user plans a trip.", 0.9, 0)]
    built = assemble(
        stored, "The user plans a trip.", memories, [(e, 1.0) for e in archive], question, settings, provenance=True
    )
    assert built.sources is not None and len(built.sources) == len(built.messages)
    checked = 0
    for message, sources in zip(built.messages, built.sources):
        assert sources, f"a prompt message with no source: {str(message)[:80]}"
        for source in sources:
            checked += 1
            _exists(source, message, history, stored, {e.id for e in archive}, {m.id for m in memories})
    assert built.sources[-1] == [Source(kind="question")]
    return checked


def _exists(
    source: Source,
    message: dict[str, Any],
    history: list[dict[str, Any]],
    stored: ContextDoc,
    entries: set[str],
    ids: set[str],
) -> None:
    kind = source["kind"]
    if kind == "turn":
        said = history[source["position"]]
        assert said["role"] == message["role"]
        if said == message:
            return
        # a tail message the compactor cut keeps the start of what was said
        assert content_text(message.get("content"))[:20] == content_text(said.get("content"))[:20]
    elif kind == "fact":
        assert 0 <= source["position"] < len(history)
        assert any(f.key == source["key"] and f.source_seq == source["position"] for f in stored.facts)
    elif kind in ("summary", "marker") and "positions" in source:
        first, last = source["positions"]
        assert 0 <= first <= last < len(history)
    elif kind == "archive":
        assert source["id"] in entries and 0 <= source["position"] < len(history)
    elif kind == "memory":
        assert source["id"] in ids
    else:
        assert kind in ("profile", "question", "marker")


@pytest.mark.parametrize("trace", agent_traces(1), ids=lambda t: t.id)
def test_every_line_of_an_agents_prompt_names_sources_that_are_in_its_log(trace: Any) -> None:
    checked = 0
    for end in range(20, len(trace.messages), 15):
        history = trace.messages[:end]
        question = next(content_text(m.get("content")) for m in reversed(history) if m.get("role") == "user")
        checked += _check(history, _stored(history, 4000), question, _settings(6000, 3000))
        checked += _check(history, _stored(history, 2666), question, _settings(4000, 2000))
    assert checked > 0


def test_every_line_of_a_chats_prompt_names_sources_that_are_in_its_log() -> None:
    for conversation in generate_conversations(4, 120, seed=3):
        history = conversation.messages
        stored = _stored(history, 1200)
        assert stored.marker_index is not None  # long enough to be compacted: marker, summary and facts are checked
        _check(history, stored, "What did I say about my budget?", _settings(2000, 600))


def test_the_block_names_the_span_it_summarizes_and_the_facts_it_shows() -> None:
    history = generate_conversations(1, 120, seed=5)[0].messages
    stored = _stored(history, 1200)
    built = assemble(stored, "", [], [], "And the hotel?", _settings(2000, 600), provenance=True)
    assert built.sources is not None and stored.marker_index is not None
    marker, block = built.sources[stored.marker_index], built.sources[stored.marker_index + 1]
    first_kept = min(p for p in stored.positions[stored.marker_index :] if p is not None)
    assert marker[0]["kind"] == "marker" and marker[0]["positions"][1] < first_kept
    shown = [s for s in block if s["kind"] == "fact"]
    assert shown and all(s["position"] < first_kept for s in shown)


def test_without_provenance_the_prompt_carries_no_sources() -> None:
    history = generate_conversations(1, 40, seed=1)[0].messages
    built = assemble(_stored(history, 1200), "", [], [], "Hi again", _settings(2000, 600))
    assert built.sources is None
