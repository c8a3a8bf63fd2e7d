"""Chunk scores to ranked documents, the rule every chunked retriever shares: a document
ranks by its best chunk (the earlier chunk on a tie) and carries its text, equal
documents go by id, and the shortlist taken from a long candidate list gives exactly what
ranking every candidate gives (hypothesis). A tag filter keeps the chunks of documents
carrying ANY of the tags."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from retrieval_eval.index.chunking import Chunk
from retrieval_eval.load.documents import Corpus, Document
from retrieval_eval.retrieval.base import Hit
from retrieval_eval.retrieval.builtin.collapse import ChunkTable

DOCS = ("b", "a", "d", "c")
TAGS = {"a": ("red",), "b": ("red", "blue"), "c": (), "d": ("green",)}


def table(chunks_per_doc: int) -> ChunkTable:
    corpus = Corpus(
        documents=tuple(Document(id=d, title=d, text=d, tags=TAGS[d]) for d in DOCS),
        location="notes",
    )
    chunks = [
        Chunk(doc_id=d, ordinal=n, section="", text=f"{d}{n}")
        for n in range(chunks_per_doc)
        for d in DOCS
    ]
    return ChunkTable(corpus, chunks)


def reference(made: ChunkTable, scores: np.ndarray, candidates: list[int], k: int) -> list[Hit]:
    best: dict[str, tuple[float, int]] = {}
    for position in sorted(candidates):
        doc = made.chunks[position].doc_id
        if doc not in best or scores[position] > best[doc][0]:
            best[doc] = (float(scores[position]), position)
    ranked = sorted(best.items(), key=lambda item: (-item[1][0], item[0]))[:k]
    return [Hit(doc, score, made.chunks[position].text) for doc, (score, position) in ranked]


def test_a_document_ranks_by_its_best_chunk_and_ties_go_by_id() -> None:
    made = table(2)  # chunks: b0 a0 d0 c0 b1 a1 d1 c1
    scores = np.array([0.1, 0.5, 0.5, 0.2, 0.9, 0.5, 0.3, 0.2])
    hits = made.top_documents(scores, np.arange(8), 3)
    assert hits == (Hit("b", 0.9, "b1"), Hit("a", 0.5, "a0"), Hit("d", 0.5, "d0"))
    assert made.top_documents(scores, np.arange(8), 0) == ()
    assert made.top_documents(scores, np.array([], dtype=np.int64), 3) == ()


@given(
    st.lists(st.sampled_from([0.0, 0.25, 0.5, 0.75, 1.0]), min_size=40, max_size=40),
    st.lists(st.integers(0, 39), max_size=40, unique=True),
    st.integers(1, 4),
)
def test_the_shortlist_ranks_as_every_candidate_would(
    values: list[float], candidates: list[int], k: int
) -> None:
    made = table(10)
    scores = np.array(values)
    hits = made.top_documents(scores, np.array(candidates, dtype=np.int64), k)
    assert list(hits) == reference(made, scores, candidates, k)


def test_a_tag_filter_keeps_documents_with_any_of_the_tags() -> None:
    made = table(1)  # chunks: b a d c
    assert made.chunk_mask([]) is None
    mask = made.chunk_mask(["green", "blue"])
    assert mask is not None and mask.tolist() == [True, False, True, False]
    assert made.tags_present(["red", "purple", "green"]) == ["green", "red"]
    assert made.tags_present(["purple"]) == []


def test_a_shortlist_short_of_k_documents_falls_back_to_every_candidate() -> None:
    made = table(10)  # 40 chunks; k = 4 shortlists the 16 best
    best_two = {"a": 0.9, "b": 1.0}
    scores = np.array([best_two.get(chunk.doc_id, 0.1) for chunk in made.chunks])
    hits = made.top_documents(scores, np.arange(40), 4)
    assert [hit.doc_id for hit in hits] == ["b", "a", "c", "d"]
