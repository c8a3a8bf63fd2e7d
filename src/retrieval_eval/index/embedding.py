"""``TextEmbedding`` as a chromadb embedding function, for vectors kept in a collection.

Importing chromadb takes about a second, so only what stores vectors in a chromadb
collection imports this module; embedding alone is ``text_embedding.TextEmbedding``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

from chromadb.api.types import Embeddable, EmbeddingFunction, Embeddings, Space
from chromadb.utils.embedding_functions import register_embedding_function

from retrieval_eval.index.batching import DEFAULT_BATCH_SIZE, DEFAULT_TOKEN_BUDGET
from retrieval_eval.index.model_catalog import DEFAULT_MODEL
from retrieval_eval.index.text_embedding import DIMENSIONS as DIMENSIONS
from retrieval_eval.index.text_embedding import TextEmbedding
from retrieval_eval.index.text_embedding import available_cores as available_cores


@register_embedding_function
class MiniLMEmbedding(TextEmbedding, EmbeddingFunction[Embeddable]):
    """chromadb embedding function backed by one reused onnxruntime session.

    It is declared over chromadb's ``Embeddable`` (texts or images) rather than
    ``Documents`` only because ``create_collection`` is typed that way; images are
    refused at run time.
    """

    def __call__(self, input: Embeddable) -> Embeddings:
        texts = list(input)
        if not all(isinstance(text, str) for text in texts):
            raise TypeError("MiniLMEmbedding embeds text only")
        return list(self.embed(cast(list[str], texts)))

    @staticmethod
    def name() -> str:
        return "retrieval_eval_minilm_l6_v2"

    def is_legacy(self) -> bool:
        # The base class decides by calling build_from_config(get_config()), which
        # would load a second model just to learn that we implement the protocol.
        return False

    def default_space(self) -> Space:
        return "cosine"

    def supported_spaces(self) -> list[Space]:
        return ["cosine", "l2", "ip"]

    def max_tokens(self) -> int:
        return self.spec.max_tokens

    def get_config(self) -> dict[str, Any]:
        return {
            # No cache: the copies chromadb rebuilds from this config are never called, and
            # a cache is opened once, by whoever embeds (opening one checks and heals it).
            "model_dir": str(self.model_dir),
            "model": self.spec.name,
            "intra_op_threads": self.intra_op_threads,
            "batch_size": self.batch_size,
            "token_budget": self.token_budget,
        }

    @staticmethod
    def build_from_config(config: dict[str, Any]) -> MiniLMEmbedding:
        return MiniLMEmbedding(
            Path(config["model_dir"]),
            intra_op_threads=config.get("intra_op_threads"),
            batch_size=int(config.get("batch_size", DEFAULT_BATCH_SIZE)),
            token_budget=int(config.get("token_budget", DEFAULT_TOKEN_BUDGET)),
            model=str(config.get("model", DEFAULT_MODEL)),
        )

    def validate_config_update(
        self, old_config: dict[str, Any], new_config: dict[str, Any]
    ) -> None:
        # Threads, batch size, cache and folder change speed, never the vectors
        # (the model itself is pinned), so every update is allowed.
        return None

    @staticmethod
    def validate_config(config: dict[str, Any]) -> None:
        if "model_dir" not in config:
            raise ValueError("MiniLMEmbedding config needs model_dir")
