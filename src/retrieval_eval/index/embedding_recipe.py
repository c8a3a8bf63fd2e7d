"""What decides a text's vector besides the text itself, in one place.

The embedding function follows this recipe and the embedding cache keys every vector
by it: a vector cached under one recipe is never served under another, so changing any
input below (or installing another model) can never mix old vectors with new ones.
"""

from __future__ import annotations

import hashlib
import json

from retrieval_eval.index.model_install import TOKENIZER_SHA256

MAX_TOKENS = 256  # sentence-transformers' max_seq_length for this model, as chromadb uses
DIMENSIONS = 384
POOLING = "mean"  # the attention-masked mean of the last hidden state
NORMALISATION = "l2"


def embedding_recipe(model_sha256: str) -> str:
    """The canonical text of the recipe with the model ``model_sha256`` (its tokenizer
    files are pinned, so their pins stand for them)."""
    tokenizer = hashlib.sha256(
        json.dumps(sorted(TOKENIZER_SHA256.items())).encode("utf-8")
    ).hexdigest()
    return json.dumps(
        {
            "dimensions": DIMENSIONS,
            "max_tokens": MAX_TOKENS,
            "model_sha256": model_sha256,
            "normalisation": NORMALISATION,
            "pooling": POOLING,
            "prefix": "",  # texts are embedded as they are, with no instruction prefix
            "tokenizer_sha256": tokenizer,
        },
        sort_keys=True,
        separators=(",", ":"),
    )
