"""A Chroma server (``chroma run``, Chroma Cloud, a team's deployment), over HTTP.

``index = "ours"`` is the ``dense`` retriever with the server as its store: the
same chunks and MiniLM vectors go into a collection named after their
fingerprint, which is kept on the server and reused while corpus, chunking and
model are unchanged. Search is ``dense``'s own, so the metrics equal in-process
``dense``.

``index = "existing"`` evaluates a collection already on the server without
re-embedding it. Queries are embedded with our MiniLM function, which gives
the vectors of Chroma's default embedding function, so the collection must
have been built with that one: any other recorded embedding function is
refused. Ids become corpus ids through ``id_metadata_key`` when the
collection's ids are chunk ids; a document ranks by its best record. A fixture's
tag filter reads the array of strings under ``tag_key`` (``$contains``, ANY of
the tags); unset, it reads the boolean ``tag:<name>`` keys our own collections
carry.

chromadb's HTTP client has no timeout (it waits forever on a hung server), so
the server is first checked with a bounded heartbeat, and the client's
connection pool is then given ``timeout_s`` for every later call.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import urlsplit

import chromadb
import httpx
import numpy as np
from chromadb.config import Settings
from chromadb.utils.embedding_functions import DefaultEmbeddingFunction

from retrieval_eval.errors import ConfigError, RetrievalEvalError
from retrieval_eval.index.embedding import DIMENSIONS, MiniLMEmbedding
from retrieval_eval.load.documents import Corpus
from retrieval_eval.retrieval.base import AnnFidelity, Hit, SearchResult
from retrieval_eval.retrieval.builtin.dense import TAG_KEY_PREFIX, DenseRetriever
from retrieval_eval.retrieval.config import DenseConfig
from retrieval_eval.retrieval.external.ann_fidelity import (
    ExactRecords,
    measure_fidelity,
    search_ranking,
)
from retrieval_eval.retrieval.external.services_config import ChromaConfig

# Names chromadb records for embedding functions that give all-MiniLM-L6-v2's vectors.
MINILM_FUNCTIONS = frozenset({"default", "onnx_mini_lm_l6_v2", MiniLMEmbedding.name()})
_SENTENCE_TRANSFORMER = "sentence_transformer"
_MINILM_MODEL = "all-MiniLM-L6-v2"
_TAG_SAMPLE = 100  # records read to check tag_key while indexing
_PAGE = 1000  # records read per request for exact search


class ChromaServerRetriever(DenseRetriever):
    name = "chroma"

    def __init__(self, config: ChromaConfig, dense: DenseConfig):
        super().__init__(dense)
        self.server = config
        self.label = f"retrievers.chroma ({config.url})"
        self._headers = config.headers("retrievers.chroma")
        self._space = "cosine"
        self._collection_name: str | None = None
        self._records: ExactRecords | None = None

    # --- the Retriever protocol ------------------------------------------------------

    def index(self, corpus: Corpus) -> None:
        if self.server.index == "ours":
            super().index(corpus)
            return
        if not self.spec.is_default:
            # The collection's vectors are recognised only as Chroma's default model's
            # (below); queries embedded by another model would not be comparable to them.
            raise ConfigError(
                f'{self.label}: index = "existing" searches vectors made by {_MINILM_MODEL}, '
                f"but [retrievers.dense] model is {self.spec.name!r}: set the default model "
                'for this retriever, or index = "ours" to index the corpus with it'
            )
        self.close()
        self._client = self._connect()
        self._collection = self._existing_collection()
        self._embedding = MiniLMEmbedding(
            self.model_dir,
            intra_op_threads=self.config.threads,
            batch_size=1,
            model=self.spec.name,
        )

    def search(self, query: str, k: int, tags: Sequence[str] = ()) -> SearchResult:
        if self.server.index == "ours":
            return super().search(query, k, tags)
        if self._collection is None or self._embedding is None:
            raise RetrievalEvalError("chroma: search() called before index()")
        total = int(self._collection.count())
        if k <= 0 or total == 0:
            return SearchResult(hits=())
        where = self._tag_filter(tags)
        vector = self._embedding.embed_queries([query])
        wanted = min(total, k * 4)
        while True:
            found = self._collection.query(
                query_embeddings=vector,
                n_results=wanted,
                where=where,
                include=["distances", "documents", "metadatas"],
            )
            hits = self._collapse(found)
            returned = len(found["ids"][0])
            if len(hits) >= k or returned < wanted or wanted >= total:
                break
            wanted = min(total, wanted * 4)
        hits.sort(key=lambda hit: (-hit.score, hit.doc_id))
        return SearchResult(hits=tuple(hits[:k]))

    def describe(self) -> Mapping[str, object]:
        where = {
            "url": self.server.url,
            "tenant": self.server.tenant,
            "database": self.server.database,
            "index": self.server.index,
            "collection": self._collection_name or self.server.collection,
        }
        if self.server.index == "ours":
            return {**super().describe(), "retriever": self.name, **where}
        described: dict[str, object] = {
            "retriever": self.name,
            **where,
            "id_metadata_key": self.server.id_metadata_key,
            "space": self._space,
            "model": _MINILM_MODEL,
        }
        if self.server.tag_key is not None:  # absent when unset: older baselines match
            described["tag_key"] = self.server.tag_key
        return described

    def ann_fidelity(
        self, queries: Sequence[tuple[str, Sequence[str]]], k: int
    ) -> AnnFidelity | None:
        """The server's HNSW search against exact search over the collection's own
        vectors, fetched once (every record) and ranked here with numpy."""
        sample = self.server.fidelity_sample(self.server.index)
        if sample <= 0 or self._collection is None or self._embedding is None:
            return None
        records = self._exact_records()
        embedding = self._embedding
        assert embedding is not None
        return measure_fidelity(
            queries,
            k,
            sample=sample,
            index="HNSW, chroma",
            approximate=search_ranking(self.search),
            exact=records.ranking(lambda query: embedding.embed_queries([query])[0]),
        )

    def close(self) -> None:
        """Our collection stays on the server (it is reused next time); the client goes."""
        self._collection = None
        self._records = None
        if self._cache is not None:
            self._cache.close()
            self._cache = None
        if self._client is not None:
            self._client.close()
            self._client = None

    # --- ours: the dense index, kept on the server --------------------------------------

    def _open_collection(self, fingerprint: str, chunk_count: int) -> bool:
        self._client = self._connect()
        name = f"{self.server.collection or 'retrieval-eval'}-{fingerprint[:16]}"
        self._collection_name = name
        try:
            existing = self._client.get_collection(name, embedding_function=None)
        except chromadb.errors.NotFoundError:
            existing = None
        if existing is not None:
            metadata = existing.metadata or {}
            if metadata.get("fingerprint") == fingerprint and existing.count() == chunk_count:
                self._collection = existing
                return True
            self._client.delete_collection(name)  # half-built by an interrupted run
        self._collection = self._client.create_collection(
            name,
            metadata={"hnsw:space": "cosine", "fingerprint": fingerprint},
            # Recorded so the collection can be evaluated later as index = "existing";
            # it is never called: every vector is computed here and passed in.
            embedding_function=DefaultEmbeddingFunction(),
        )
        return False

    # --- existing: the user's collection ----------------------------------------------

    def _existing_collection(self) -> Any:
        name = self.server.collection
        assert name is not None  # ChromaConfig requires it for index = "existing"
        try:
            collection = self._client.get_collection(name, embedding_function=None)
        except chromadb.errors.NotFoundError:
            names = sorted(c.name for c in self._client.list_collections())
            raise ConfigError(
                f"retrievers.chroma.collection: no collection {name!r} in "
                f"{self.server.tenant}/{self.server.database} on {self.server.url} "
                f"(it has: {', '.join(names) if names else 'none'})"
            ) from None
        configuration = collection.configuration_json or {}
        function = configuration.get("embedding_function") or {}
        function_name = function.get("name") if isinstance(function, dict) else None
        model = (function.get("config") or {}).get("model_name") if function_name else None
        same_model = function_name in MINILM_FUNCTIONS or (
            function_name == _SENTENCE_TRANSFORMER and str(model).endswith(_MINILM_MODEL)
        )
        if not same_model:
            recorded = function_name or "none recorded"
            raise ConfigError(
                f"retrievers.chroma.collection {name!r} was built with the embedding function "
                f"{recorded!r}, not Chroma's default all-MiniLM-L6-v2: our query vectors "
                f'would not match its vectors (use index = "ours" to index the corpus)'
            )
        space = (configuration.get("hnsw") or {}).get("space") or (
            (collection.metadata or {}).get("hnsw:space", "l2")
        )
        self._space = str(space)
        sample = collection.peek(1)
        embeddings = sample.get("embeddings")
        if embeddings is None or len(embeddings) == 0:
            raise ConfigError(f"retrievers.chroma.collection {name!r} is empty")
        if len(embeddings[0]) != DIMENSIONS:
            raise ConfigError(
                f"retrievers.chroma.collection {name!r} holds {len(embeddings[0])}-dimensional "
                f"vectors; all-MiniLM-L6-v2 gives {DIMENSIONS}"
            )
        key = self.server.id_metadata_key
        metadatas = sample.get("metadatas") or [None]
        if key is not None and key not in (metadatas[0] or {}):
            raise ConfigError(
                f"retrievers.chroma.id_metadata_key: the records of {name!r} have no "
                f"metadata key {key!r} (first record's keys: {sorted(metadatas[0] or {})})"
            )
        self._check_tag_key(collection, name)
        self._collection_name = name
        return collection

    def _tag_filter(self, tags: Sequence[str]) -> dict[str, Any] | None:
        """Records carrying ANY of the tags: in the array under ``tag_key``, or (unset) as
        the boolean ``tag:<name>`` keys our own collections carry. A tag no record carries
        matches none, so the result is empty, never an unfiltered search."""
        if not tags:
            return None
        key = self.server.tag_key
        clauses: list[dict[str, Any]] = [
            {key: {"$contains": tag}} if key is not None else {TAG_KEY_PREFIX + tag: True}
            for tag in sorted(set(tags))
        ]
        return clauses[0] if len(clauses) == 1 else {"$or": clauses}

    def _check_tag_key(self, collection: Any, name: str) -> None:
        """``tag_key`` must name an array of strings in the collection's metadata: a
        misspelt key would make every filtered query silently empty."""
        key = self.server.tag_key
        if key is None:
            return
        sample = collection.get(limit=_TAG_SAMPLE, include=["metadatas"])
        metadatas = [m or {} for m in sample.get("metadatas") or []]
        values = [m[key] for m in metadatas if key in m]
        if not values:
            seen = sorted({k for m in metadatas for k in m})
            raise ConfigError(
                f"retrievers.chroma.tag_key: none of the first {len(metadatas)} records of "
                f"{name!r} has the metadata key {key!r} (their keys: "
                f"{', '.join(seen) if seen else 'none'})"
            )
        wrong = next((v for v in values if not _string_list(v)), None)
        if wrong is not None:
            raise ConfigError(
                f"retrievers.chroma.tag_key: {key!r} in {name!r} holds {type(wrong).__name__} "
                f"values such as {wrong!r}; $contains needs an array of strings "
                '(metadata such as {"' + key + '": ["tag-a", "tag-b"]})'
            )

    def _exact_records(self) -> ExactRecords:
        """Every record's vector, document id and tags, read in pages (once per run)."""
        if self._records is not None:
            return self._records
        ours = self.server.index == "ours"
        key = "doc" if ours else self.server.id_metadata_key
        tag_key = None if ours else self.server.tag_key
        vectors: list[np.ndarray] = []
        doc_ids: list[str] = []
        tags: list[frozenset[str]] = []
        offset = 0
        while True:
            page = self._collection.get(
                limit=_PAGE, offset=offset, include=["embeddings", "metadatas"]
            )
            ids: list[str] = page["ids"]
            if not ids:
                break
            vectors.append(np.asarray(page["embeddings"], dtype=np.float64))
            for record_id, metadata in zip(
                ids, page["metadatas"] or [None] * len(ids), strict=True
            ):
                metadata = metadata or {}
                doc_ids.append(str(metadata.get(key, record_id)) if key else record_id)
                tags.append(_record_tags(metadata, tag_key))
            offset += len(ids)
            if len(ids) < _PAGE:
                break
        matrix = np.vstack(vectors) if vectors else np.zeros((0, DIMENSIONS))
        self._records = ExactRecords(self._space, matrix, doc_ids, tags)
        return self._records

    def _collapse(self, found: Mapping[str, Any]) -> list[Hit]:
        """Records → documents: each document's best record (results come best first)."""
        key = self.server.id_metadata_key
        ids: list[str] = found["ids"][0]
        distances: list[float] = found["distances"][0]
        documents: list[str | None] = (found.get("documents") or [[None] * len(ids)])[0]
        metadatas: list[Mapping[str, Any] | None] = (found.get("metadatas") or [[None] * len(ids)])[
            0
        ]
        seen: dict[str, Hit] = {}
        for record_id, distance, text, metadata in zip(
            ids, distances, documents, metadatas, strict=True
        ):
            doc_id = str((metadata or {}).get(key, record_id)) if key else record_id
            if doc_id not in seen:
                seen[doc_id] = Hit(doc_id, self._score(distance), text or "")
        return list(seen.values())

    def _score(self, distance: float) -> float:
        # Cosine distance is 1 − similarity; for l2 and ip, smaller is better, so negate.
        return 1.0 - float(distance) if self._space == "cosine" else -float(distance)

    # --- the connection -----------------------------------------------------------------

    def _connect(self) -> Any:
        parts = urlsplit(self.server.url)
        ssl = parts.scheme == "https"
        host = parts.hostname or ""
        port = parts.port or (443 if ssl else 80)
        timeout = float(self.server.timeout_s)
        heartbeat = self.server.url.rstrip("/") + "/api/v2/heartbeat"
        try:
            response = httpx.get(heartbeat, headers=self._headers, timeout=timeout, trust_env=False)
        except httpx.HTTPError as error:
            raise ConfigError(
                f"retrievers.chroma.url: cannot reach {self.server.url} "
                f"({type(error).__name__}: {error or 'no answer'})"
            ) from None
        if response.status_code != 200:
            raise ConfigError(
                f"retrievers.chroma.url: {heartbeat} answered {response.status_code} "
                f"{response.reason_phrase} (is it a Chroma server, and are headers_env right?)"
            )
        try:
            client = chromadb.HttpClient(
                host=host,
                port=port,
                ssl=ssl,
                headers=self._headers,
                tenant=self.server.tenant,
                database=self.server.database,
                settings=Settings(anonymized_telemetry=False),
            )
        except Exception as error:  # chromadb raises ValueError or its own errors here
            raise ConfigError(
                f"retrievers.chroma: {self.server.url} refused tenant {self.server.tenant!r} / "
                f"database {self.server.database!r}: {error}"
            ) from None
        _bound_timeout(client, timeout)
        return client


def _record_tags(metadata: Mapping[str, Any], tag_key: str | None) -> frozenset[str]:
    if tag_key is not None:
        value = metadata.get(tag_key)
        return frozenset(str(tag) for tag in value) if isinstance(value, list) else frozenset()
    return frozenset(
        name[len(TAG_KEY_PREFIX) :]
        for name, value in metadata.items()
        if name.startswith(TAG_KEY_PREFIX) and value is True
    )


def _string_list(value: object) -> bool:
    return isinstance(value, list) and all(isinstance(item, str) for item in value)


def _bound_timeout(client: Any, timeout_s: float) -> None:
    """chromadb builds its httpx client with ``timeout=None``; give every call a bound."""
    session = getattr(getattr(client, "_server", None), "_session", None)
    if not isinstance(session, httpx.Client):
        raise RetrievalEvalError(
            "retrievers.chroma: this chromadb version's HTTP client is not the one this "
            "retriever knows how to give a timeout; pin chromadb as in requirements/"
        )
    session.timeout = httpx.Timeout(timeout_s)
