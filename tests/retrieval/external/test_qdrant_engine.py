"""Qdrant's store in local mode, for real (qdrant-client's embedded engine in a folder):
the store contract, and a team's collection read as it is (its distance, its named
vectors) or refused with the setting to change."""

from __future__ import annotations

from pathlib import Path

import pytest
from qdrant_client import QdrantClient, models

from retrieval_eval.errors import ConfigError
from retrieval_eval.retrieval.external.engine import LocalFolder
from retrieval_eval.retrieval.external.engines_config import QdrantConfig
from retrieval_eval.retrieval.external.qdrant_engine import QdrantStore
from tests.retrieval.external.store_contract import QUERY, check_store


def store_in(folder: Path, **table: object) -> QdrantStore:
    return QdrantStore(QdrantConfig.model_validate(table), LocalFolder(folder), None, None)


def test_local_mode_keeps_searches_and_reads_back_our_collection(tmp_path: Path) -> None:
    store = store_in(tmp_path / "qdrant")
    assert (store.approximate, store.describe()) == (False, {"search": "exact", "mode": "local"})
    check_store(store, "ours_0123")
    store.remove()
    assert (tmp_path / "qdrant").is_dir()  # a configured folder stays


def team_collection(folder: Path, name: str, vectors: models.VectorParams | dict) -> None:
    client = QdrantClient(path=str(folder))
    client.create_collection(name, vectors_config=vectors)
    if isinstance(vectors, models.VectorParams):
        client.upsert(
            name,
            points=[
                models.PointStruct(id=1, vector=[1.0, 0.0, 0.0], payload={"doc": "near"}),
                models.PointStruct(id=2, vector=[0.0, 0.0, 5.0], payload={"doc": "far"}),
            ],
        )
    client.close()


def test_a_euclidean_collection_ranks_the_nearest_first(tmp_path: Path) -> None:
    folder = tmp_path / "team"
    team_collection(folder, "notes", models.VectorParams(size=3, distance=models.Distance.EUCLID))
    store = store_in(folder, index="existing", collection="notes", id_key="doc")
    assert store.open_existing("notes") == 3
    assert store.space == "l2"
    found = store.search(QUERY, 2, [])
    assert [r.payload["doc"] for r in found] == ["near", "far"]
    assert found[0].score > found[1].score  # a distance turned into higher-is-better
    store.close()


def test_a_missing_collection_names_the_ones_there_are(tmp_path: Path) -> None:
    folder = tmp_path / "team"
    team_collection(folder, "notes", models.VectorParams(size=3, distance=models.Distance.DOT))
    store = store_in(folder, index="existing", collection="nots")
    with pytest.raises(ConfigError, match=r"no collection 'nots' on local mode \(it has: notes\)"):
        store.open_existing("nots")
    store.close()


def test_named_vectors_need_vector_name_when_there_are_several(tmp_path: Path) -> None:
    folder = tmp_path / "team"
    params = models.VectorParams(size=3, distance=models.Distance.COSINE)
    wide = models.VectorParams(size=5, distance=models.Distance.COSINE)
    team_collection(folder, "notes", {"title": params, "body": wide})
    store = store_in(folder, index="existing", collection="notes")
    with pytest.raises(ConfigError, match=r"vector_name: .* named vectors body, title; set"):
        store.open_existing("notes")
    store.close()
    store = store_in(folder, index="existing", collection="notes", vector_name="body")
    assert store.open_existing("notes") == 5
    assert store.describe()["vector_name"] == "body"
    store.close()
    store = store_in(folder, index="existing", collection="notes", vector_name="summary")
    with pytest.raises(ConfigError, match=r"no vector 'summary' \(it has: body, title\)"):
        store.open_existing("notes")
    store.close()


def test_a_distance_it_cannot_rank_by_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "team"
    team_collection(
        folder, "notes", models.VectorParams(size=3, distance=models.Distance.MANHATTAN)
    )
    store = store_in(folder, index="existing", collection="notes")
    with pytest.raises(ConfigError, match="uses the Manhattan distance; cosine, dot and euclid"):
        store.open_existing("notes")
    store.close()
