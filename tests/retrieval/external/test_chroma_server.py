"""`chroma` against a real `chroma run` server on 127.0.0.1, through the console script:
tag filters on a user's own collection (`tag_key`, Chroma's array metadata), and ANN
fidelity (the server's HNSW against exact search over the collection's own vectors),
checked against what this test computes on its own."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from retrieval_eval.index.embedding import MiniLMEmbedding
from retrieval_eval.load.corpus import load_corpus
from tests.retrieval.service_helpers import (
    REPO,
    repo_fixtures,
    run_cli,
    run_repo_datasets,
    tiny_beir,
)
from tests.support.services import ChromaServer, chroma_server

pytestmark = [pytest.mark.slow, pytest.mark.service]

CORPUS = REPO / "datasets" / "corpus"


@pytest.fixture(scope="module")
def chroma(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ChromaServer]:
    with chroma_server(tmp_path_factory.mktemp("chroma")) as server:
        yield server


def _client(chroma: ChromaServer) -> Any:
    import chromadb

    return chromadb.HttpClient(host="127.0.0.1", port=chroma.port)


def _collection(chroma: ChromaServer, name: str, **configuration: object) -> Any:
    """A new collection recorded with Chroma's default (all-MiniLM-L6-v2) embedding
    function, as a team that let Chroma embed its documents has."""
    from chromadb.utils.embedding_functions import DefaultEmbeddingFunction

    client = _client(chroma)
    if name in {c.name for c in client.list_collections()}:
        client.delete_collection(name)
    return client.create_collection(
        name,
        embedding_function=DefaultEmbeddingFunction(),
        configuration={"hnsw": {"space": "cosine", **configuration}},
    )


@pytest.fixture(scope="module")
def tagged(chroma: ChromaServer, model_dir: Path) -> str:
    """This repository's notes, one record each, their tags as an array under "tags"."""
    documents = load_corpus(CORPUS).documents
    vectors = MiniLMEmbedding(model_dir).embed([f"{d.title}\n{d.text}" for d in documents])
    collection = _collection(chroma, "notes-with-tags")
    collection.add(
        ids=[d.id for d in documents],
        embeddings=vectors,
        documents=[d.text for d in documents],
        metadatas=[{"tags": list(d.tags)} if d.tags else {"kind": "note"} for d in documents],
    )
    return "notes-with-tags"


def _existing(chroma: ChromaServer, collection: str, **settings: object) -> str:
    lines = [f'url = "{chroma.url}"', 'index = "existing"', f'collection = "{collection}"']
    lines += [f"{key} = {json.dumps(value)}" for key, value in settings.items()]
    return "\n".join(lines) + "\n"


def test_tag_filters_read_the_tag_key_of_your_collection(
    tmp_path: Path, chroma: ChromaServer, tagged: str
) -> None:
    """Filtered queries return only notes carrying one of their tags (ANY), and a tag no
    note carries returns nothing, never an unfiltered search."""
    tags = {doc.id: set(doc.tags) for doc in load_corpus(CORPUS).documents}
    _, report = run_repo_datasets(tmp_path, "chroma", _existing(chroma, tagged, tag_key="tags"))
    fixtures = {f["query_id"]: f for f in repo_fixtures()}
    checked = carried_somewhere = 0
    for query in (q for d in report["datasets"] for q in d["queries"]):
        wanted = set((fixtures[query["query_id"]].get("filters") or {}).get("tags", []))
        if not wanted:
            continue
        checked += 1
        assert all(tags[doc] & wanted for doc in query["retrieved"]), query["query_id"]
        if any(wanted & carried for carried in tags.values()):
            carried_somewhere += 1
            assert query["retrieved"], query["query_id"]  # the filter found its notes
        else:
            assert query["retrieved"] == [], query["query_id"]
    assert (checked, carried_somewhere) == (9, 6)
    assert report["datasets"][0]["retriever_config"]["tag_key"] == "tags"


def test_a_tag_key_the_records_lack_or_hold_as_text_is_refused(
    tmp_path: Path, chroma: ChromaServer, tagged: str
) -> None:
    tiny = tiny_beir(tmp_path / "tiny")
    text_tags = _collection(chroma, "text-tags")
    text_tags.add(ids=["d1"], embeddings=[[0.1] * 384], metadatas=[{"tags": "a,b"}])

    def run(table: str) -> Any:
        config = tmp_path / "c.toml"
        config.write_text("[retrievers.chroma]\n" + table)
        return run_cli("beir", str(tiny), "--retriever", "chroma", "--config", str(config))

    missing = run(_existing(chroma, tagged, tag_key="labels"))
    assert (missing.returncode, missing.stdout) == (2, "")
    assert missing.stderr == (
        "error: retrievers.chroma.tag_key: none of the first 61 records of 'notes-with-tags' "
        "has the metadata key 'labels' (their keys: kind, tags)\n"
    )
    text = run(_existing(chroma, "text-tags", tag_key="tags"))
    assert (text.returncode, text.stdout) == (2, "")
    assert text.stderr == (
        "error: retrievers.chroma.tag_key: 'tags' in 'text-tags' holds str values such as "
        "'a,b'; $contains needs an array of strings (metadata such as "
        '{"tags": ["tag-a", "tag-b"]})\n'
    )
    ours = run(f'url = "{chroma.url}"\ntag_key = "tags"\n')
    assert ours.returncode == 2
    assert 'tag_key applies to index = "existing" only' in ours.stderr


# --- ANN fidelity -------------------------------------------------------------------------

K = 10  # the run's k (the default)


def _exact_top(
    vectors: np.ndarray,
    ids: list[str],
    tags: list[set[str]],
    query: np.ndarray,
    wanted: set[str],
) -> list[str]:
    """Brute-force cosine, a document by its best record, ties by id, ANY-tag filter."""
    unit = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    scores = unit @ (query / np.linalg.norm(query))
    best: dict[str, float] = {}
    for position, doc_id in enumerate(ids):
        if wanted and not tags[position] & wanted:
            continue
        best[doc_id] = max(best.get(doc_id, -2.0), float(scores[position]))
    return [d for d, _ in sorted(best.items(), key=lambda item: (-item[1], item[0]))[:K]]


def _own_recall(
    report: dict[str, Any],
    sample: int,
    model_dir: Path,
    vectors: np.ndarray,
    ids: list[str],
    tags: list[set[str]],
) -> dict[str, tuple[float, int]]:
    """Per dataset: this test's recall@K of the run's ranked lists (the server's HNSW
    answers) against its own exact top K, over the first ``sample`` queries."""
    fixtures = {f["query_id"]: f for f in repo_fixtures()}
    embed = MiniLMEmbedding(model_dir)
    own = {}
    for dataset in report["datasets"]:
        recalls = []
        for query in dataset["queries"][:sample]:
            fixture = fixtures[query["query_id"]]
            wanted = set((fixture.get("filters") or {}).get("tags", []))
            vector = embed.embed([fixture["query"]])[0].astype(np.float64)
            exact = _exact_top(vectors, ids, tags, vector, wanted)
            if exact:
                recalls.append(len(set(query["retrieved"][:K]) & set(exact)) / len(exact))
        own[dataset["name"]] = (sum(recalls) / len(recalls), len(recalls))
    return own


def test_our_collection_reports_hnsw_fidelity_by_default(
    tmp_path: Path, chroma: ChromaServer, model_dir: Path
) -> None:
    _, report = run_repo_datasets(tmp_path, "chroma", f'url = "{chroma.url}"\n')
    name = report["datasets"][0]["retriever_config"]["collection"]
    stored = _client(chroma).get_collection(name).get(include=["embeddings", "metadatas"])
    ids = [m["doc"] for m in stored["metadatas"]]
    tags = [
        {k[len("tag:") :] for k, v in m.items() if k.startswith("tag:") and v}
        for m in stored["metadatas"]
    ]
    vectors = np.asarray(stored["embeddings"], dtype=np.float64)
    own = _own_recall(report, 20, model_dir, vectors, ids, tags)
    for dataset in report["datasets"]:
        fidelity = dataset["ann_fidelity"]
        assert (fidelity["index"], fidelity["k"]) == ("HNSW, chroma", K)
        recall, counted = own[dataset["name"]]
        assert fidelity["queries"] == counted
        assert fidelity["recall"] == pytest.approx(recall, abs=1e-12)


def test_a_sparse_hnsw_graph_of_your_own_shows_its_recall_loss(
    tmp_path: Path, chroma: ChromaServer, model_dir: Path
) -> None:
    """index = "existing": random vectors in an HNSW graph with two neighbours a node and
    the smallest search beam. The run's recall of exact search equals this test's own
    count, and is well below 1; unasked, an existing collection is not measured."""
    rng = np.random.default_rng(11)
    vectors = rng.standard_normal((3000, 384))
    ids = [f"v{i:04d}" for i in range(len(vectors))]
    collection = _collection(
        chroma, "sparse-graph", max_neighbors=2, ef_construction=4, ef_search=1
    )
    for start in range(0, len(ids), 500):
        collection.add(ids=ids[start : start + 500], embeddings=vectors[start : start + 500])
    table = _existing(chroma, "sparse-graph")
    _, off = run_repo_datasets(tmp_path, "chroma", table)
    assert all(d["ann_fidelity"] is None for d in off["datasets"])

    _, report = run_repo_datasets(tmp_path, "chroma", table + "ann_fidelity_queries = 15\n")
    # The records carry no tags: a filtered query finds nothing either way and is not
    # counted, so the sample is the first 15 queries less the filtered ones among them.
    own = _own_recall(report, 15, model_dir, vectors, ids, [set[str]() for _ in ids])
    for dataset in report["datasets"]:
        fidelity = dataset["ann_fidelity"]
        recall, counted = own[dataset["name"]]
        assert fidelity["index"] == "HNSW, chroma"
        assert fidelity["queries"] == counted
        assert fidelity["recall"] == pytest.approx(recall, abs=1e-12)
        assert fidelity["recall"] < 0.9
