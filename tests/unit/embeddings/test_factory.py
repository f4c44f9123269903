"""Which embedders the settings load: none when off (nothing of numpy imported), one per language when local."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from pydantic import ValidationError

from tests.unit.embeddings.fakes import TableEmbedder
from turnstream.embeddings.base import EmbeddingError
from turnstream.embeddings.factory import MODELS_DIR, Embedders, load_embedders, model_folder
from turnstream.settings import Settings


def test_off_by_default_loads_nothing_and_imports_no_numpy() -> None:
    check = (
        "import sys\nfrom turnstream.settings import Settings\nfrom turnstream.embeddings.factory import load_embedders\n"
        "assert load_embedders(Settings()) is None\n"
        "assert not {'numpy', 'onnxruntime', 'tokenizers'} & set(sys.modules), sorted(sys.modules)"
    )
    subprocess.run([sys.executable, "-c", check], check=True, timeout=60, env={"PATH": "/usr/bin:/bin"})


def test_each_language_has_its_model_folder_by_default() -> None:
    assert model_folder(None, "en") == MODELS_DIR / "all-minilm-l6-v2-q"
    assert model_folder(None, "zh") == MODELS_DIR / "bge-small-zh-v15"
    assert model_folder("/m/x", "zh") == Path("/m/x")


def test_a_missing_model_is_one_line_at_load(tmp_path: Path) -> None:
    settings = Settings(embeddings="local", embedding_model_dir=str(tmp_path), embedding_model_dir_zh=str(tmp_path))
    with pytest.raises(EmbeddingError, match="run `make models`") as raised:
        load_embedders(settings)
    assert "\n" not in str(raised.value)


def test_a_text_goes_to_the_model_of_its_language() -> None:
    en, zh = TableEmbedder(model_id="en-4"), TableEmbedder(model_id="zh-4")
    embedders = Embedders(en, zh)
    assert embedders.for_text("What martial arts has John done?") is en
    assert embedders.for_text("我妹妹的猫叫什么？") is zh
    assert embedders.ids().distinct == ("en-4", "zh-4")
    assert Embedders(en, en).ids().distinct == ("en-4",)
    ids = embedders.ids()  # what the worker keeps of its models: the same rule, without them
    assert ids.for_text("What martial arts has John done?") == "en-4"
    assert ids.for_text("我妹妹的猫叫什么？") == "zh-4"


@pytest.mark.parametrize(
    "values, message",
    [
        ({"embeddings": "openai", "embedding_dims": 384}, "needs TURNSTREAM_EMBEDDING_BASE_URL"),
        ({"embeddings": "openai", "embedding_base_url": "http://127.0.0.1:1/v1"}, "needs TURNSTREAM_EMBEDDING_DIMS"),
        ({"embeddings": "remote"}, "Input should be 'off', 'local' or 'openai'"),
    ],
)
def test_the_openai_embeddings_need_an_endpoint_and_a_dimension(values: dict[str, object], message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        Settings(**values)  # type: ignore[arg-type]
