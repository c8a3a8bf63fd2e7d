"""BM25 on Cranfield against bm25s's own Lucene-formula pipeline, as docs/benchmarks.md reports."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import bm25s
import numpy as np
from bm25s.stopwords import STOPWORDS_EN

from retrieval_eval.load.beir import load_beir
from retrieval_eval.score.query_scores import score_queries

CLI = Path(sys.executable).parent / "retrieval-eval"


def _reference(directory: Path, *, with_title: bool) -> float:
    """bm25s end to end: its tokenizer, Lucene's 33 stop words, k1 0.9, b 0.4."""
    data = load_beir(directory)
    ids = [doc.id for doc in data.corpus.documents]
    texts = [f"{doc.title} {doc.text}" if with_title else doc.text for doc in data.corpus.documents]
    model = bm25s.BM25(k1=0.9, b=0.4, method="lucene")
    words = list(STOPWORDS_EN)
    model.index(bm25s.tokenize(texts, stopwords=words, show_progress=False), show_progress=False)
    rankings = {}
    for qid, query in data.queries.items():
        tokens = bm25s.tokenize([query], stopwords=words, show_progress=False)
        found, _ = model.retrieve(tokens, k=100, show_progress=False)
        rankings[qid] = [ids[i] for i in found[0]]
    return float(
        np.mean(list(score_queries(data.qrels, rankings, ["ndcg@10"])["ndcg@10"].values()))
    )


def _ours(directory: Path, tmp_path: Path, stopwords: str) -> float:
    config = tmp_path / "retrieval-eval.toml"
    # At Lucene's k1 and b, without stemming, as the reference scores.
    config.write_text(
        f"[retrievers.bm25]\nk1 = 0.9\nb = 0.4\nstemming = false\nstopwords = {stopwords}\n"
    )
    out = tmp_path / "bm25.json"
    done = subprocess.run(
        [
            str(CLI),
            "beir",
            str(directory),
            "--retriever",
            "bm25",
            "--config",
            str(config),
            "--json",
            str(out),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return float(json.loads(out.read_text())["ndcg@10"])


def test_stopwords_en_179_is_within_0_005_of_the_title_plus_text_reference(
    cranfield_beir: Path, tmp_path: Path
) -> None:
    reference = _reference(cranfield_beir, with_title=True)
    assert abs(_ours(cranfield_beir, tmp_path, '"en-179"') - reference) <= 0.005


def test_the_default_matches_the_reference_on_the_same_text(
    cranfield_beir: Path, tmp_path: Path
) -> None:
    # Cranfield's text begins with its title: indexing title + text counts it twice.
    reference = _reference(cranfield_beir, with_title=False)
    assert abs(_ours(cranfield_beir, tmp_path, "true") - reference) <= 0.002
