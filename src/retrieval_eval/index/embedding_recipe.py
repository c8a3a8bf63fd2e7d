"""What decides a text's vector besides the text itself, in one place.

The embedding function follows this recipe and the embedding cache keys every vector
by it: a vector cached under one recipe is never served under another, so changing any
input below (or installing another model) can never mix old vectors with new ones.
"""

from __future__ import annotations

import hashlib
import json
from typing import Literal

from retrieval_eval.index.model_catalog import DEFAULT_MODEL, MODELS, ModelSpec
from retrieval_eval.index.model_install import TOKENIZER_SHA256

_DEFAULT = MODELS[DEFAULT_MODEL]
MAX_TOKENS = _DEFAULT.max_tokens  # sentence-transformers' max_seq_length, as chromadb uses
DIMENSIONS = _DEFAULT.dimensions  # every catalogued model's (tests/index/test_model_catalog.py)
POOLING = _DEFAULT.pooling  # the attention-masked mean of the last hidden state
NORMALISATION = _DEFAULT.normalisation

Role = Literal["query", "passage"]
ROLES: tuple[Role, ...] = ("query", "passage")


def _pins_digest(pins: list[tuple[str, str]]) -> str:
    return hashlib.sha256(json.dumps(sorted(pins)).encode("utf-8")).hexdigest()


def embedding_recipe(
    model_sha256: str, spec: ModelSpec | None = None, role: Role = "passage"
) -> str:
    """The canonical text of the recipe with the model ``model_sha256`` for texts in
    ``role`` (a query and a passage get different prefixes in some models).

    The built models' recipe (the default's and its int8 copy's, told apart by
    ``model_sha256``) is the one every earlier release wrote, so their caches stay valid.
    Every other model's adds its name, its engine and the pins of every file it runs from
    (an engine library changes vectors as much as the weights do).
    """
    spec = spec if spec is not None else _DEFAULT
    if spec.built:
        tokenizer = _pins_digest(list(TOKENIZER_SHA256.items()))
    else:
        tokenizer = _pins_digest([(n, spec.files[n].sha256) for n in spec.tokenizer_files])
    recipe: dict[str, object] = {
        "dimensions": spec.dimensions,
        "max_tokens": spec.max_tokens,
        "model_sha256": model_sha256,
        "normalisation": spec.normalisation,
        "pooling": spec.pooling,
        "prefix": spec.prefix(role),
        "tokenizer_sha256": tokenizer,
    }
    if not spec.built:
        recipe["model"] = spec.name
        recipe["engine"] = spec.engine
        recipe["files_sha256"] = _pins_digest([(n, f.sha256) for n, f in spec.files.items()])
    return json.dumps(recipe, sort_keys=True, separators=(",", ":"))
