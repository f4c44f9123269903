from dataclasses import replace

from turnstream.compaction.strategies import Digest
from turnstream.compaction.strategies.archive import Archiver
from turnstream.compaction.strategies.composite import CompositeStrategy
from turnstream.compaction.strategies.offline import build_strategy
from turnstream.settings import Settings


def test_archive_keeps_raw_turns_with_seq_and_keywords() -> None:
    call = {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": "1", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Oslo"}'}}
        ],
    }
    dropped = [
        {"role": "user", "content": "What is the weather in Oslo tomorrow?"},
        call,
        {"role": "user", "content": "我想去杭州西湖"},
    ]
    archived = Archiver().apply(Digest(), dropped, 40).archived
    assert [a.seq for a in archived] == [40, 41, 42]
    assert all(a.message is m for a, m in zip(archived, dropped))
    assert archived[0].keywords == ("weather", "oslo", "tomorrow")
    assert {"get_weather", "city", "oslo"} <= set(archived[1].keywords)
    assert {"杭州", "西湖"} <= set(archived[2].keywords)


def test_archive_holds_only_the_latest_application() -> None:
    archiver = Archiver()
    digest = archiver.apply(Digest(), [{"role": "user", "content": "first"}], 0)
    digest = archiver.apply(digest, [{"role": "user", "content": "second"}], 1)
    assert [a.seq for a in digest.archived] == [1]


class Recorder:
    def __init__(self, name: str, log: list[str]) -> None:
        self.name, self.log = name, log

    def apply(self, digest: Digest, dropped, first_seq: int) -> Digest:
        self.log.append(self.name)
        return replace(digest, summary=digest.summary + self.name)


class Broken:
    name = "broken"

    def apply(self, digest: Digest, dropped, first_seq: int) -> Digest:
        raise RuntimeError("boom")


def test_composite_applies_in_order_and_skips_a_failing_strategy() -> None:
    log: list[str] = []
    composite = CompositeStrategy(Recorder("a", log), Broken(), Recorder("b", log))
    assert composite.apply(Digest(), [], 0).summary == "ab"
    assert log == ["a", "b"] and composite.name == "a+broken+b"


def test_build_strategy_is_archive_then_extract_then_summarize() -> None:
    settings = Settings(summary_max_tokens=77, max_facts=5)
    strategy = build_strategy(settings)
    assert [s.name for s in strategy.strategies] == ["archive", "keyinfo", "summary"]
    assert strategy.strategies[1].max_facts == 5 and strategy.strategies[2].max_tokens == 77
    digest = strategy.apply(Digest(), [{"role": "user", "content": "My budget is 500 euros."}], 3)
    assert digest.archived[0].seq == 3 and digest.facts[0].key == "budget" and "500" in digest.facts[0].text
    assert "500" not in digest.summary  # the summary does not restate what the facts show
