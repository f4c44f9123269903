"""Sentence embeddings for semantic recall: a model turns text into unit vectors, off the context's path.

`Embedder` is the one seam (base.py): an ONNX model run in-process (local.py) or an OpenAI-compatible
embeddings endpoint (remote.py), chosen by TURNSTREAM_EMBEDDINGS (factory.py; "off" by default, and then
nothing here is imported). What the vectors become for the read path is pure: expansion terms over a
vocabulary (expansion.py) or compact stored vectors (codec.py). `make models` unpacks the models
(unpack.py). Importing this package loads neither numpy nor a model.
"""

from turnstream.embeddings.base import Embedder, EmbeddingError, passage_text

__all__ = ["Embedder", "EmbeddingError", "passage_text"]
