"""BM25 on a BEIR folder under different stop-word lists, against bm25s's own pipeline.

The reference is bm25s scoring whole documents with its own tokenizer
(``bm25s.tokenize``: lowercase, ``\\b\\w\\w+\\b`` words, an English stop-word
list) and Lucene's formula at k1=0.9, b=0.4. Our ``bm25`` is measured at the same
k1 and b with no stop words, with Lucene's 33-word list and with the 179-word list
(``stopwords = "en-179"``). Last, the three-line script a user would write (bm25s
with its own defaults: k1 1.5, b 0.75, ``stopwords="en"``) against our defaults.

    .venv/bin/python bench/bench_bm25_stopwords.py DIR
"""

from __future__ import annotations

import sys
from pathlib import Path

import bm25s
import numpy as np
from bm25s.stopwords import STOPWORDS_EN, STOPWORDS_EN_PLUS

from retrieval_eval.load.beir import load_beir
from retrieval_eval.retrieval.builtin.bm25 import Bm25Retriever
from retrieval_eval.retrieval.config import Bm25Config
from retrieval_eval.score.query_scores import score_queries


def ndcg(qrels: dict[str, dict[str, int]], rankings: dict[str, list[str]]) -> float:
    per_query = score_queries(qrels, rankings, ["ndcg@10"])["ndcg@10"]
    return float(np.mean(list(per_query.values())))


def main(directory: Path) -> None:
    data = load_beir(directory)
    ids = [doc.id for doc in data.corpus.documents]
    texts = [f"{doc.title} {doc.text}" for doc in data.corpus.documents]
    for label, words in (
        ("bm25s lucene, 33 words", STOPWORDS_EN),
        ("bm25s lucene, 179 words", STOPWORDS_EN_PLUS),
    ):
        model = bm25s.BM25(k1=0.9, b=0.4, method="lucene")
        model.index(
            bm25s.tokenize(texts, stopwords=list(words), show_progress=False), show_progress=False
        )
        rankings = {}
        for qid, query in data.queries.items():
            tokens = bm25s.tokenize([query], stopwords=list(words), show_progress=False)
            found, _ = model.retrieve(tokens, k=100, show_progress=False)
            rankings[qid] = [ids[i] for i in found[0]]
        print(f"{label:<32} ndcg@10 {ndcg(data.qrels, rankings):.4f}")
    model = bm25s.BM25()
    model.index(bm25s.tokenize(texts, stopwords="en", show_progress=False), show_progress=False)
    rankings = {}
    for qid, query in data.queries.items():
        tokens = bm25s.tokenize([query], stopwords="en", show_progress=False)
        found, _ = model.retrieve(tokens, k=100, show_progress=False)
        rankings[qid] = [ids[i] for i in found[0]]
    print(f"{'bm25s, its own defaults':<32} ndcg@10 {ndcg(data.qrels, rankings):.4f}")
    configs: list[tuple[str, Bm25Config]] = [
        (
            f"bm25 k1=0.9 b=0.4 stopwords={words!r}",
            Bm25Config(k1=0.9, b=0.4, stemming=False, stopwords=words),
        )
        for words in (False, True, "en-179")
    ]
    configs.append(("bm25, its defaults", Bm25Config()))
    for label, config in configs:
        retriever = Bm25Retriever(config)
        retriever.index(data.corpus)
        rankings = {
            qid: [hit.doc_id for hit in retriever.search(query, 100).hits]
            for qid, query in data.queries.items()
        }
        print(f"{label:<40} ndcg@10 {ndcg(data.qrels, rankings):.4f}")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
