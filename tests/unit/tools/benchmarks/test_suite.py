"""The recall bench embeds with the checkout's models unless TURNSTREAM_EMBEDDINGS says otherwise."""

from __future__ import annotations

from pathlib import Path

import pytest

from turnstream.embeddings import factory
from turnstream.settings import Settings
from turnstream_tools.benchmarks.suite import with_local_models


@pytest.fixture
def models(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A checkout whose `make models` ran: a manifest in each language's folder."""
    for name in ("en", "zh"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "manifest.json").write_text("{}")
    monkeypatch.setattr(factory, "model_folder", lambda folder, language: tmp_path / language)
    return tmp_path


def test_models_at_hand_are_used_when_the_variable_is_unset(models: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TURNSTREAM_EMBEDDINGS", raising=False)
    assert with_local_models(Settings()).embeddings == "local"


def test_an_explicit_off_measures_words_only(models: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TURNSTREAM_EMBEDDINGS", "off")
    assert with_local_models(Settings()).embeddings == "off"
    assert with_local_models(Settings().model_copy(update={"redis_url": "redis://x:1/0"})).embeddings == "off"


def test_without_the_models_nothing_changes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TURNSTREAM_EMBEDDINGS", raising=False)
    monkeypatch.setattr(factory, "model_folder", lambda folder, language: tmp_path / language)
    assert with_local_models(Settings()).embeddings == "off"
