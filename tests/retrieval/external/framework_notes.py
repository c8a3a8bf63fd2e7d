"""Real LangChain and LlamaIndex retrievers over this repository's notes, as a team would
build them, for `[retrievers.langchain]` and `[retrievers.llamaindex]` to evaluate.

The vector store retrievers index the chunks `dense` indexes (its chunker, its model's
token windows) embedded by our ONNX model through each framework's own embedding
interface, with each chunk's document id and tags in its metadata: searched exactly
(both frameworks' in-memory stores compute every cosine), they mirror `dense`.
LangChain's BM25 retriever indexes whole notes.

Each function is what ``object = "module:function"`` names; the factory host calls it
with the table's ``options`` (``corpus``: another corpus than the notes, e.g. a BEIR
folder for `retrieval-eval beir`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from retrieval_eval.index.chunking import Chunk, chunk_corpus
from retrieval_eval.index.embedding_cache import EmbeddingCache
from retrieval_eval.index.model_install import default_model_dir
from retrieval_eval.index.text_embedding import TextEmbedding
from retrieval_eval.load.corpus import load_corpus
from retrieval_eval.load.documents import Corpus
from retrieval_eval.retrieval.builtin.dense import chunk_cap
from retrieval_eval.retrieval.config import DenseConfig

CORPUS = Path(__file__).resolve().parents[3] / "datasets" / "corpus"


def _embedding(cache_dir: str | None, model_dir: str | None) -> TextEmbedding:
    cache = EmbeddingCache(Path(cache_dir)) if cache_dir else None
    return TextEmbedding(Path(model_dir) if model_dir else default_model_dir(Path.home()), cache)


def _detach(embedding: TextEmbedding) -> None:
    """Queries go through the model, as dense's do; and the cache's SQLite connection
    must not be used from the threads LangChain's ``batch`` runs queries in."""
    if embedding.cache is not None:
        embedding.cache.close()
        embedding.cache = None


def _chunks(embedding: TextEmbedding, path: str | None) -> tuple[Corpus, list[Chunk]]:
    corpus = load_corpus(Path(path) if path else CORPUS)
    dense = DenseConfig()
    chunks = chunk_corpus(
        corpus,
        max_tokens=chunk_cap(dense.chunk_tokens, embedding.spec),
        overlap=dense.chunk_overlap,
        spans=embedding.chunk_spans,
    )
    return corpus, chunks


def _metadata(corpus: Corpus, chunk: Chunk, id_key: str) -> dict[str, Any]:
    tags = {document.id: list(document.tags) for document in corpus.documents}
    return {id_key: chunk.doc_id, "tags": tags[chunk.doc_id], "chunk": chunk.id}


def langchain_vector_store(
    cache_dir: str | None = None,
    model_dir: str | None = None,
    id_key: str = "doc_id",
    corpus: str | None = None,
) -> Any:
    from langchain_core.documents import Document
    from langchain_core.embeddings import Embeddings
    from langchain_core.vectorstores import InMemoryVectorStore

    class OnnxEmbeddings(Embeddings):
        def __init__(self, embedding: TextEmbedding) -> None:
            self.embedding = embedding

        def embed_documents(self, texts: list[str]) -> list[list[float]]:
            vectors: list[list[float]] = self.embedding.embed(list(texts)).tolist()
            return vectors

        def embed_query(self, text: str) -> list[float]:
            vector: list[float] = self.embedding.embed_queries([text])[0].tolist()
            return vector

    embedding = _embedding(cache_dir, model_dir)
    loaded, chunks = _chunks(embedding, corpus)
    store = InMemoryVectorStore(OnnxEmbeddings(embedding))
    store.add_documents(
        [Document(page_content=c.text, metadata=_metadata(loaded, c, id_key)) for c in chunks],
        ids=[chunk.id for chunk in chunks],
    )
    _detach(embedding)
    return store.as_retriever()


def langchain_bm25() -> Any:
    from langchain_community.retrievers import BM25Retriever
    from langchain_core.documents import Document

    corpus = load_corpus(CORPUS)
    return BM25Retriever.from_documents(
        [
            Document(
                page_content=f"{document.title}\n{document.text}",
                metadata={"doc_id": document.id, "tags": list(document.tags)},
            )
            for document in corpus.documents
        ],
        preprocess_func=lambda text: text.lower().split(),
    )


def llamaindex_vector_store(
    cache_dir: str | None = None, model_dir: str | None = None, corpus: str | None = None
) -> Any:
    from llama_index.core import VectorStoreIndex
    from llama_index.core.embeddings import BaseEmbedding
    from llama_index.core.schema import TextNode
    from pydantic import PrivateAttr

    class OnnxEmbedding(BaseEmbedding):
        _embedding: TextEmbedding = PrivateAttr()

        def __init__(self, embedding: TextEmbedding) -> None:
            super().__init__(model_name="all-MiniLM-L6-v2", embed_batch_size=64)
            self._embedding = embedding

        def _get_query_embedding(self, query: str) -> list[float]:
            vector: list[float] = self._embedding.embed_queries([query])[0].tolist()
            return vector

        async def _aget_query_embedding(self, query: str) -> list[float]:
            return self._get_query_embedding(query)

        def _get_text_embedding(self, text: str) -> list[float]:
            return self._get_text_embeddings([text])[0]

        def _get_text_embeddings(self, texts: list[str]) -> list[list[float]]:
            vectors: list[list[float]] = self._embedding.embed(list(texts)).tolist()
            return vectors

    embedding = _embedding(cache_dir, model_dir)
    loaded, chunks = _chunks(embedding, corpus)
    # LlamaIndex embeds a node's metadata with its text unless told not to: the chunk's
    # text alone is what dense embeds.
    nodes = [
        TextNode(
            id_=chunk.id,
            text=chunk.text,
            metadata=_metadata(loaded, chunk, "doc_id"),
            excluded_embed_metadata_keys=["doc_id", "tags", "chunk"],
            excluded_llm_metadata_keys=["doc_id", "tags", "chunk"],
        )
        for chunk in chunks
    ]
    index = VectorStoreIndex(nodes, embed_model=OnnxEmbedding(embedding))
    _detach(embedding)
    return index.as_retriever()


def llamaindex_summary() -> Any:
    """A retriever that takes no metadata filter and needs no model: every note, in order."""
    from llama_index.core import Document, SummaryIndex

    corpus = load_corpus(CORPUS)
    return SummaryIndex.from_documents(
        [
            Document(text=document.text, metadata={"doc_id": document.id})
            for document in corpus.documents
        ]
    ).as_retriever()
