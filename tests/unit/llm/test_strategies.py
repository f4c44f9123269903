"""The LLM strategies' builder: it needs an endpoint, then archives, extracts and summarizes as the offline one."""

import pytest

from turnstream.llm.strategies import build_llm_strategy
from turnstream.settings import Settings


def test_build_llm_strategy_needs_a_base_url(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_BASE_URL", "TURNSTREAM_OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(ValueError, match="OPENAI_BASE_URL"):
        build_llm_strategy(Settings())
    names = [s.name for s in build_llm_strategy(Settings(OPENAI_BASE_URL="http://127.0.0.1:9/v1")).strategies]
    assert names == ["archive", "llm-keyinfo", "llm-summary"]
