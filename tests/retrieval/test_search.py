"""Index once, search every fixture: a retriever is built and indexed once per name and
settings for the whole run, a hybrid (a challenger's too, when only its fusion differs)
fuses the dense and bm25 indexes already built, each dataset's search says what produced
it, and hits naming documents the corpus lacks are warned about once."""

from __future__ import annotations

import json
from pathlib import Path

from retrieval_eval.load.documents import Corpus
from retrieval_eval.load.fixtures import Fixture, LocatedFixture
from retrieval_eval.retrieval.config import HybridConfig, RetrieversConfig, RunFileConfig
from retrieval_eval.retrieval.search import RetrieverPool, own_settings, search_dataset

FILE = Path("datasets/notes.jsonl")


def fixture(qid: str, query: str, line: int, **fields: object) -> LocatedFixture:
    made: dict[str, object] = {
        "query_id": qid,
        "query": query,
        "retrieval_type": "keyword",
        "ground_truth_source": "human-annotated",
        "expected_top_k_ids": ["travel/lisbon"],
    }
    made.update(fields)
    return LocatedFixture(Fixture.model_validate(made), FILE, line)


FIXTURES = [
    fixture("q1", "lisbon flights budget", 1),
    fixture("q2", "pesto basil", 2, expected_top_k_ids=["recipes/pesto"]),
]


def pool(config: RetrieversConfig, corpus: Corpus, tmp_path: Path, log: list[str]) -> RetrieverPool:
    return RetrieverPool(config, corpus, interactive=False, log=log.append, cache_dir=tmp_path)


def test_a_retriever_is_indexed_once_and_a_hybrid_fuses_the_sides_already_built(
    notes: Corpus, retrievers_config: RetrieversConfig, tmp_path: Path
) -> None:
    log: list[str] = []
    with pool(retrievers_config, notes, tmp_path, log) as retrievers:
        bm25, first_s = retrievers.get("bm25")
        again, again_s = retrievers.get("bm25")
        assert again is bm25 and first_s > 0 and again_s == 0.0
        hybrid, _ = retrievers.get("hybrid")
        dense, _ = retrievers.get("dense")
        assert hybrid.sides == {"dense": dense, "bm25": bm25}  # type: ignore[attr-defined]
        rrf = retrievers_config.model_copy(update={"hybrid": HybridConfig(fusion="rrf")})
        challenger, challenger_s = retrievers.get("hybrid", rrf)
        assert challenger is not hybrid and challenger_s == 0.0  # nothing indexed again
        assert challenger.sides == {"dense": dense, "bm25": bm25}  # type: ignore[attr-defined]
        assert retrievers.model_sha256 is not None
        searched = search_dataset(
            FILE, FIXTURES, retrievers, name="hybrid", k=3, interactive=False, log=log.append
        )
        assert [t.query_id for t in searched.timed] == ["q1", "q2"]
        assert searched.timed[0].result.hits[0].doc_id == "travel/lisbon"
        assert searched.retriever_config["retriever"] == "hybrid"
        assert searched.embedding_counts is not None and searched.embedding_counts[0] >= 0
        repeated = search_dataset(
            FILE,
            FIXTURES,
            retrievers,
            name="bm25",
            k=3,
            interactive=False,
            log=log.append,
            repeats=3,
        )
        assert len(repeated.repeats) == 2 and repeated.embedding_counts is None
    assert not any(line.startswith("warning") for line in log)


def test_hits_naming_documents_the_corpus_lacks_are_warned_about(
    notes: Corpus, tmp_path: Path
) -> None:
    run = tmp_path / "nightly.run"
    run.write_text(
        "q1 Q0 travel/lisbon 1 2.0 nightly\nq1 Q0 travel/porto 2 1.0 nightly\n"
        "q2 Q0 recipes/risotto 1 1.0 nightly\n",
        encoding="utf-8",
    )
    config = RetrieversConfig(run_file=RunFileConfig(path=run))
    log: list[str] = []
    with pool(config, notes, tmp_path, log) as retrievers:
        searched = search_dataset(
            FILE, FIXTURES, retrievers, name="run-file", k=3, interactive=False, log=log.append
        )
    assert [hit.doc_id for hit in searched.timed[0].result.hits] == [
        "travel/lisbon",
        "travel/porto",
    ]
    assert (
        log.count(
            "warning: notes.jsonl: 2 hits name documents not in the corpus (e.g. 'travel/porto'); "
            "they count as misses"
        )
        == 1
    )


def test_a_retriever_s_own_settings_tell_configurations_apart() -> None:
    plain = RetrieversConfig()
    rrf = plain.model_copy(update={"hybrid": HybridConfig(fusion="rrf")})
    assert own_settings("bm25", plain) == own_settings("bm25", rrf)
    assert own_settings("hybrid", plain) != own_settings("hybrid", rrf)
    assert sorted(json.loads(own_settings("hybrid", plain))) == ["bm25", "dense", "hybrid"]
    assert sorted(json.loads(own_settings("qdrant", plain))) == ["dense", "qdrant"]
