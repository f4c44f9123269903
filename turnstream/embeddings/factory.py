"""The embedders the settings ask for, loaded and checked once at start (before any turn), or none at all.

TURNSTREAM_EMBEDDINGS=off (the default) loads nothing and imports nothing of numpy or ONNX Runtime. "local"
loads one ONNX model per language (the same folder twice is one model) with its folder's vocabulary cache;
"openai" one endpoint for every language, without a vocabulary. A missing model or extra, a broken file or an endpoint that does not answer is one EmbeddingError
line, raised by `load_embedders`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from turnstream.embeddings.base import Embedder, EmbeddingError
from turnstream.settings import Settings
from turnstream.text.language import Language, text_language

if TYPE_CHECKING:
    from turnstream.embeddings.vocabulary import Vocabulary

MODELS_DIR = Path(__file__).resolve().parents[2] / ".models"
"""Where `make models` unpacks the models: the checkout's .models (git-ignored)."""
DEFAULT_MODELS: dict[Language, str] = {"en": "all-minilm-l6-v2-q", "zh": "bge-small-zh-v15"}
"""Per language, the model folder under MODELS_DIR used when no folder is configured: MiniLM separates
English well and Chinese poorly, bge-small-zh the other way round (docs/embeddings.md)."""


@dataclass(frozen=True)
class ModelIds:
    """The model id of each language: what the worker needs of its models (the tags its vectors carry) without
    holding the models, which live in its embedding process (embeddings/process.py)."""

    en: str
    zh: str

    def for_text(self, text: str) -> str:
        """The id of the model that embeds `text`, by turnstream's one language rule (text/language.py)."""
        return self.zh if text_language(text) == "zh" else self.en

    @property
    def distinct(self) -> tuple[str, ...]:
        """Every distinct model in use, English's first."""
        return tuple(dict.fromkeys((self.en, self.zh)))


@dataclass(frozen=True)
class Embedders:
    """The embedder of each language: a turn and a query are embedded by the model of their text's language."""

    en: Embedder
    zh: Embedder
    vocabularies: Mapping[str, Vocabulary] = field(default_factory=dict)
    """Per model id, the vocabulary cache of its model folder (an endpoint's model has none)."""

    def for_language(self, language: Language) -> Embedder:
        return self.zh if language == "zh" else self.en

    def for_text(self, text: str) -> Embedder:
        """The model for `text`, by turnstream's one language rule (text/language.py)."""
        return self.for_language(text_language(text))

    def ids(self) -> ModelIds:
        return ModelIds(self.en.model_id, self.zh.model_id)

    def check(self) -> None:
        """Run each distinct model once on a probe; EmbeddingError (one line) when one fails."""
        for embedder in {id(e): e for e in (self.en, self.zh)}.values():
            embedder.check()


def model_folder(configured: str | None, language: Language) -> Path:
    """The configured model folder, else the checkout's `make models` folder for `language`."""
    return Path(configured) if configured else MODELS_DIR / DEFAULT_MODELS[language]


def load_embedders(settings: Settings) -> Embedders | None:
    """The settings' embedders, loaded and checked; None when embeddings are off. Call it at start."""
    if settings.embeddings == "off":
        return None
    try:
        embedders = _openai(settings) if settings.embeddings == "openai" else _local(settings)
    except ImportError as error:  # numpy, ONNX Runtime or the tokenizer library not installed
        raise EmbeddingError(
            f"TURNSTREAM_EMBEDDINGS={settings.embeddings} needs {error.name}: pip install 'turnstream[embeddings]'"
        ) from None
    embedders.check()
    return embedders


def _local(settings: Settings) -> Embedders:
    from turnstream.embeddings.local import OnnxEmbedder
    from turnstream.embeddings.vocabulary import Vocabulary

    configured: dict[Language, str | None] = {"en": settings.embedding_model_dir, "zh": settings.embedding_model_dir_zh}
    folders = {language: model_folder(folder, language).resolve() for language, folder in configured.items()}
    loaded = {
        folder: OnnxEmbedder(folder, settings.embedding_threads, settings.embedding_batch_size)
        for folder in dict.fromkeys(folders.values())
    }
    vocabularies = {
        model.model_id: Vocabulary.load(folder) for folder, model in loaded.items() if model.manifest.vocabulary
    }
    return Embedders(loaded[folders["en"]], loaded[folders["zh"]], vocabularies)


def _openai(settings: Settings) -> Embedders:
    from turnstream.embeddings.remote import OpenAIEmbedder

    assert settings.embedding_dims is not None  # the settings refuse "openai" without it
    embedder = OpenAIEmbedder(
        settings.embedding_base_url or settings.openai_base_url or "",
        settings.openai_api_key.get_secret_value(),
        settings.embedding_model,
        settings.embedding_dims,
        settings.embedding_batch_size,
        settings.embedding_timeout_seconds,
        settings.embedding_max_retries,
    )
    return Embedders(embedder, embedder)
