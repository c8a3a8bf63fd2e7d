"""Settings of the built-in retrievers and of the user's own system.

These models are embedded under the ``[retrievers]`` table of
``retrieval-eval.toml``. Unknown keys are errors (``extra="forbid"``) because a
misspelt ``k1`` that silently falls back to the default would make a baseline
comparison meaningless.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, field_validator, model_validator

from retrieval_eval.index.batching import DEFAULT_BATCH_SIZE, DEFAULT_TOKEN_BUDGET
from retrieval_eval.index.model_catalog import AUTO_MODEL, MODELS
from retrieval_eval.retrieval.external.engines_config import (
    LanceDbConfig,
    MilvusConfig,
    QdrantConfig,
)
from retrieval_eval.retrieval.external.services_config import (
    ChromaConfig,
    HttpConfig,
    PostgresConfig,
    RunFileConfig,
)

HYBRID_SIDES = ("dense", "bm25")


# No timeout a configuration sets may pass this: a longer one would outlast any CI job, and
# `inf` or 1e9 would fail only by accident, inside select().
MAX_TIMEOUT_S = 3600.0


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class DenseConfig(_Strict):
    """ChromaDB + an embedding model: ``"auto"`` (all-MiniLM-L6-v2, or its int8 copy for
    a corpus of over 10,000 documents: ``retrieval.defaults.choose_dense_model``) unless
    ``model`` names one.

    ``chunk_tokens`` counts the model's own word pieces including the section
    heading line; the default leaves room for ``[CLS]``/``[SEP]`` under the
    model's 256-token window, so no chunk is silently truncated. A model with a
    smaller window caps it at that window less two.
    """

    # "auto" or one of index/model_catalog.MODELS; `retrieval-eval model list` shows them.
    model: str = AUTO_MODEL
    # None: chromadb's DOWNLOAD_PATH, where `model install` puts it. With "auto", the
    # default model's folder; the int8 copy is read from onnx-int8 beside it.
    model_dir: Path | None = None
    cache_dir: Path | None = None  # embedding cache; None: no cache
    persist_dir: Path | None = None  # None: an in-process, ephemeral collection
    batch_size: int = Field(default=DEFAULT_BATCH_SIZE, ge=1)
    # Most texts × padded length per model call: bounds embedding memory per batch.
    token_budget: int = Field(default=DEFAULT_TOKEN_BUDGET, ge=256)
    threads: int | None = Field(default=None, ge=1)  # None: every available core
    chunk_tokens: int = Field(default=254, ge=16, le=254)
    chunk_overlap: int = Field(default=32, ge=0)

    @field_validator("model")
    @classmethod
    def _catalogued(cls, model: str) -> str:
        if model != AUTO_MODEL and model not in MODELS:
            raise ValueError(
                f"unknown embedding model {model!r}; available: {AUTO_MODEL}, "
                f"{', '.join(MODELS)} (`retrieval-eval model list`)"
            )
        return model

    @model_validator(mode="after")
    def _overlap_below_cap(self) -> DenseConfig:
        _check_overlap(self.chunk_tokens, self.chunk_overlap)
        return self


class Bm25Config(_Strict):
    """Okapi BM25 as Lucene computes it. The defaults (k1 1.5, b 0.6, the 179-word stop
    list, Snowball English stemming) were chosen by 5-fold cross-validation on two public
    test collections (docs/retrievers.md says how); Anserini's Lucene values (k1 0.9,
    b 0.4, 33 stop words, no stemming), the usual BEIR reference, scored 0.03–0.07
    NDCG@10 lower on both.

    Long documents are scored per passage of ``chunk_tokens`` words (a
    document scores as its best passage), so a huge file neither dominates by
    length nor hands the judge megabytes of text.
    """

    k1: float = Field(default=1.5, ge=0.0)
    b: float = Field(default=0.6, ge=0.0, le=1.0)
    stemming: bool = True
    # "lucene" (or true): Lucene's 33 English stop words; "en-179": the larger 179-word
    # English list ("en", its former name, still works); false: none. See
    # tokenizer.STOPWORD_LISTS.
    stopwords: bool | Literal["lucene", "en-179", "en"] = "en-179"
    chunk_tokens: int = Field(default=512, ge=16)
    chunk_overlap: int = Field(default=64, ge=0)

    @model_validator(mode="after")
    def _overlap_below_cap(self) -> Bm25Config:
        _check_overlap(self.chunk_tokens, self.chunk_overlap)
        return self


class LikeConfig(_Strict):
    """The naive keyword baseline has no knobs on purpose: it is the fixed
    yardstick the other retrievers are compared with."""


FUSIONS = ("rrf", "convex", "dbsf")
NORMALISATIONS = ("min-max", "z-score", "theoretical-min", "theoretical")
RERANKERS = ("none", "claude", "custom")
# The lowest score each side's scoring function can give, for theoretical-min and
# theoretical normalisation: cosine similarity is at least −1, a BM25 score at least 0.
SCORE_FLOORS: dict[str, float] = {"dense": -1.0, "bm25": 0.0}
# The highest, for theoretical normalisation, where it does not depend on the query:
# cosine similarity is at most 1. BM25's depends on the query's terms; the bm25
# retriever reports it with each result (SearchResult.score_ceiling).
SCORE_CEILINGS: dict[str, float] = {"dense": 1.0}


class ClaudeRerankConfig(_Strict):
    """``[retrievers.hybrid.claude]``: the listwise Claude reranker. The API key is not
    here (files get committed): the edges read ``ANTHROPIC_API_KEY``."""

    model: str = Field(default="claude-haiku-4-5", min_length=1)
    # USD per million tokens, Claude Haiku 4.5's list prices; cost_per_query_usd uses them.
    input_usd_per_mtok: float = Field(default=1.0, ge=0.0)
    output_usd_per_mtok: float = Field(default=5.0, ge=0.0)
    max_retries: int = Field(default=3, ge=0, le=10)
    timeout_s: float = Field(default=60.0, gt=0, le=MAX_TIMEOUT_S)
    base_url: str | None = None  # an Anthropic-compatible gateway; None: Anthropic's API
    passage_chars: int = Field(default=600, ge=50)  # each candidate's text is cut to this
    cache_dir: Path | None = None  # None: `run` uses <cache-dir>/rerank, `beir` none


class HybridConfig(_Strict):
    """Dense + BM25, each retrieving ``depth`` documents, fused, optionally reranked.

    The defaults were chosen by 5-fold cross-validation on Cranfield
    (docs/retrievers.md says how and why).
    """

    fusion: Literal["rrf", "convex", "dbsf"] = "convex"
    depth: int = Field(default=100, ge=1)
    # rrf: score(d) = Σ weight / (rrf_k + rank); dbsf: Σ weight · three-sigma score.
    rrf_k: int = Field(default=60, ge=1)
    weights: dict[str, float] = Field(default_factory=lambda: {"dense": 1.0, "bm25": 1.0})
    # convex: alpha · dense + (1 − alpha) · bm25 over normalised scores.
    alpha: float = Field(default=0.7, ge=0.0, le=1.0)
    normalisation: Literal["min-max", "z-score", "theoretical-min", "theoretical"] = "theoretical"
    reranker: Literal["none", "claude", "custom"] = "none"
    rerank_depth: int = Field(default=20, ge=1)
    claude: ClaudeRerankConfig = Field(default_factory=ClaudeRerankConfig)
    custom: CustomConfig | None = None  # the custom reranker: python factory or command

    @field_validator("weights")
    @classmethod
    def _known_sides(cls, weights: dict[str, float]) -> dict[str, float]:
        unknown = sorted(set(weights) - set(HYBRID_SIDES))
        if unknown:
            raise ValueError(
                f"unknown retriever(s) {', '.join(unknown)} in weights; "
                f"hybrid fuses {' and '.join(HYBRID_SIDES)}"
            )
        negative = sorted(name for name, weight in weights.items() if weight < 0)
        if negative:
            raise ValueError(
                f"weights must be >= 0 (got a negative weight for {', '.join(negative)})"
            )
        if not any(weights.get(side, 1.0) > 0 for side in HYBRID_SIDES):
            raise ValueError("at least one weight must be > 0")
        return weights

    @model_validator(mode="after")
    def _custom_reranker_configured(self) -> HybridConfig:
        if self.reranker == "custom" and self.custom is None:
            raise ValueError(
                'reranker = "custom" needs a [retrievers.hybrid.custom] table with '
                "`python` (module:factory) or `command`"
            )
        return self

    def weight(self, side: str) -> float:
        """A side left out of ``weights`` keeps the default weight 1.0."""
        return self.weights.get(side, 1.0)

    def side_used(self, side: str) -> bool:
        """Whether fusion can be changed by ``side`` at all; an unused side is not run."""
        if self.fusion == "convex":
            share = self.alpha if side == "dense" else 1.0 - self.alpha
            return share > 0
        return self.weight(side) > 0

    def fusion_settings(self) -> dict[str, object]:
        """The settings that shape the fused ranking, and only those (for describe/tune)."""
        settings: dict[str, object] = {"fusion": self.fusion, "depth": self.depth}
        if self.fusion == "rrf":
            settings["rrf_k"] = self.rrf_k
        if self.fusion in ("rrf", "dbsf"):
            settings["weights"] = {side: self.weight(side) for side in HYBRID_SIDES}
        if self.fusion == "convex":
            settings["alpha"] = self.alpha
            settings["normalisation"] = self.normalisation
        return settings


class CustomConfig(_Strict):
    """The user's own system: either a Python factory or a long-running command.

    ``python = "package.module:factory"`` is called as ``factory(**options)`` and
    must return an object meeting the Retriever protocol. ``command`` is started
    once and spoken to over JSON lines (docs/retrievers.md).
    """

    python: str | None = None
    command: list[str] | None = None
    options: dict[str, Any] = Field(default_factory=dict)
    cwd: Path | None = None
    timeout_s: float = Field(default=120.0, gt=0, le=MAX_TIMEOUT_S)

    @model_validator(mode="after")
    def _exactly_one_way(self) -> CustomConfig:
        if (self.python is None) == (self.command is None):
            raise ValueError(
                "set exactly one of `python` (module:factory) or `command` (argv list)"
            )
        if self.python is not None:
            module, _, attribute = self.python.partition(":")
            if not module or not attribute:
                raise ValueError(
                    f"python = {self.python!r} must look like 'package.module:factory'"
                )
        if self.command is not None and not self.command:
            raise ValueError("command must name a program, e.g. ['./my-search']")
        return self


class FrameworkConfig(_Strict):
    """A framework's retriever by reference (``[retrievers.langchain]``,
    ``[retrievers.llamaindex]``): ``object = "module:attribute"`` names the retriever, or a
    function returning one (called with ``options``). Each result's document id is its
    metadata's ``id_key``; its score the metadata's ``score_key`` where set, else the
    framework's own score, else 1 / rank; a fixture's tag filter matches ANY of the tags
    in the ``tag_key`` metadata list, where the retriever takes a metadata filter."""

    object: str
    id_key: str
    score_key: str | None = None
    tag_key: str | None = None
    options: dict[str, Any] = Field(default_factory=dict)
    cwd: Path | None = None
    timeout_s: float = Field(default=120.0, gt=0, le=3600)

    @field_validator("object")
    @classmethod
    def _reference(cls, spec: str) -> str:
        module, _, attribute = spec.partition(":")
        if not module or not attribute:
            raise ValueError(f"object = {spec!r} must look like 'package.module:attribute'")
        return spec

    @field_validator("id_key", "score_key", "tag_key")
    @classmethod
    def _key(cls, key: str | None) -> str | None:
        if key is not None and not key.strip():
            raise ValueError("a metadata key cannot be empty")
        return key


HybridConfig.model_rebuild()


class RetrieversConfig(_Strict):
    """Every retriever's settings; only the chosen retriever's table is used."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    dense: DenseConfig = Field(default_factory=DenseConfig)
    bm25: Bm25Config = Field(default_factory=Bm25Config)
    like: LikeConfig = Field(default_factory=LikeConfig)
    hybrid: HybridConfig = Field(default_factory=HybridConfig)
    custom: CustomConfig | None = None
    postgres: PostgresConfig | None = None
    chroma: ChromaConfig | None = None
    http: HttpConfig | None = None
    run_file: RunFileConfig | None = Field(default=None, alias="run-file")
    qdrant: QdrantConfig | None = None
    lancedb: LanceDbConfig | None = None
    milvus: MilvusConfig | None = None
    langchain: FrameworkConfig | None = None
    llamaindex: FrameworkConfig | None = None
    # The run's cache folder, where an engine with no location keeps its embedded store
    # (set by resolve_defaults; private, so no dump, baseline or fingerprint holds it).
    _cache_dir: Path | None = PrivateAttr(default=None)

    def engine_cache_dir(self) -> Path | None:
        return self._cache_dir


def _check_overlap(cap: int, overlap: int) -> None:
    if overlap >= cap // 2:
        raise ValueError(
            f"chunk_overlap ({overlap}) must be less than half of chunk_tokens ({cap}), "
            "or consecutive chunks would mostly repeat each other"
        )
