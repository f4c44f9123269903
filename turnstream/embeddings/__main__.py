"""`python -m turnstream.embeddings`: load and check the configured embedders, as a worker does before its first turn.

Prints each model's id and dimension (or "embeddings off"); a missing or broken model is one line and status 1.
"""

from __future__ import annotations

import sys

from pydantic import ValidationError

from turnstream.embeddings.base import EmbeddingError
from turnstream.embeddings.factory import load_embedders
from turnstream.settings import Settings


def main() -> int:
    try:
        embedders = load_embedders(Settings())
    except ValidationError as error:
        print(
            f"turnstream: invalid settings: {error.errors()[0]['msg'].removeprefix('Value error, ')}", file=sys.stderr
        )
        return 2
    except EmbeddingError as error:
        print(f"turnstream: {error}", file=sys.stderr)
        return 1
    if embedders is None:
        print("embeddings off")
        return 0
    for language in ("en", "zh"):
        embedder = embedders.for_language(language)
        print(f"{language}: {embedder.model_id} ({embedder.dims} dims)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
