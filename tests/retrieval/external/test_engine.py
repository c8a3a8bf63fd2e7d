"""Qdrant (local mode), LanceDB (embedded) and Milvus (Milvus Lite), each for real, through
the console script and the Action: named alone in [dataset_retrievers] each runs embedded in
the cache folder and lands on `dense`'s NDCG@10 (the same chunks and vectors, searched
exactly); `index = "existing"` searches a collection as a team's own, with ANN fidelity; and
each misconfiguration is one error naming the retriever and the fix, exit 2."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from retrieval_eval.retrieval.external.engines_config import LOCAL_STORE
from retrieval_eval.retrieval.external.milvus_engine import LITE_FILE
from tests.retrieval.external.engine_helpers import (
    action_on_repo,
    action_report,
    assert_parity,
    dense_ndcg,
    embeddings_cache,
    engine_mapping,
    failing_run,
    github,
    run_on_repo,
)
from tests.support.fake_github import FakeGitHub

pytestmark = pytest.mark.slow

ENGINES = ("qdrant", "lancedb", "milvus")
__all__ = ["dense_ndcg", "embeddings_cache", "github"]  # fixtures used by name


@pytest.mark.parametrize("engine", ENGINES)
def test_an_engine_named_alone_runs_embedded_in_the_cache_folder_through_the_action(
    engine: str, tmp_path: Path, github: FakeGitHub, dense_ndcg: dict[str, float]
) -> None:
    result, _ = action_on_repo(tmp_path, github, engine_mapping(engine))
    assert result.returncode == 0, result.log
    assert result.outputs["verdict"] == "baseline-established", result.log
    report = action_report(tmp_path)
    assert_parity(report, dense_ndcg)
    assert {d["retriever"] for d in report["datasets"]} == {engine}
    store = tmp_path / "workspace" / ".retrieval-eval-cache" / LOCAL_STORE[engine]
    assert store.exists(), sorted(p.name for p in store.parent.iterdir())


@pytest.mark.parametrize("engine", ENGINES)
def test_an_existing_collection_is_searched_with_its_ann_fidelity(
    engine: str, tmp_path: Path, embeddings_cache: Path, dense_ndcg: dict[str, float]
) -> None:
    """Our own collection, built by a first run, searched by a second as a team's own:
    its document ids from the `doc` field, its texts from `text`, exact search against
    the engine's (both exact here: recall 1.0)."""
    store = tmp_path / LOCAL_STORE[engine]
    ours = run_on_repo(tmp_path / "ours", engine, f'local_dir = "{store}"\n', embeddings_cache)
    assert_parity(ours, dense_ndcg)
    collection = ours["datasets"][0]["retriever_config"]["collection"]
    table = (
        f'local_dir = "{store}"\nindex = "existing"\ncollection = "{collection}"\n'
        'id_key = "doc"\ntext_key = "text"\nann_fidelity_queries = 5\n'
    )
    existing = run_on_repo(tmp_path / "existing", engine, table, embeddings_cache)
    assert_parity(existing, dense_ndcg)
    for dataset in existing["datasets"]:
        assert dataset["retriever_config"]["index"] == "existing"
        assert dataset["ann_fidelity"]["queries"] == 5
        assert dataset["ann_fidelity"]["recall"] == 1.0
        assert dataset["ann_fidelity"]["index"].endswith(f", {engine}")
        assert all(q["retrieved"] for q in dataset["queries"] if not q["expect_empty"])
    assert "groundedness" in existing["datasets"][0]["aggregates"]


@pytest.mark.parametrize("engine", ENGINES)
def test_a_collection_of_the_wrong_dimension_is_refused(engine: str, tmp_path: Path) -> None:
    store = tmp_path / LOCAL_STORE[engine]
    _collection_of_dimension(engine, store, "small_vectors", 8)
    stderr = failing_run(
        tmp_path / "run",
        engine_mapping(engine)
        + f'[retrievers.{engine}]\nlocal_dir = "{store}"\nindex = "existing"\n'
        'collection = "small_vectors"\nid_key = "doc"\n',
    )
    assert f"retrievers.{engine}: collection 'small_vectors' holds 8-dimensional vectors" in stderr
    assert "gives 384" in stderr
    assert stderr.count("error:") == 1, stderr


@pytest.mark.parametrize("engine", ENGINES)
def test_an_id_key_the_records_lack_names_the_fields_they_have(engine: str, tmp_path: Path) -> None:
    store = tmp_path / LOCAL_STORE[engine]
    _collection_of_dimension(engine, store, "notes", 384)
    stderr = failing_run(
        tmp_path / "run",
        engine_mapping(engine)
        + f'[retrievers.{engine}]\nlocal_dir = "{store}"\nindex = "existing"\n'
        'collection = "notes"\nid_key = "document_id"\n',
    )
    assert f"retrievers.{engine}.id_key" in stderr
    assert "no payload field 'document_id'" in stderr
    assert "doc" in stderr  # the field the records do have


@pytest.mark.parametrize("engine", ENGINES)
def test_a_missing_client_library_names_the_extra(engine: str, tmp_path: Path) -> None:
    """The client as a machine without the extra has it: not importable."""
    shadow = tmp_path / "without"
    shadow.mkdir()
    module = {"qdrant": "qdrant_client", "lancedb": "lancedb", "milvus": "pymilvus"}[engine]
    (shadow / f"{module}.py").write_text(f'raise ImportError("No module named {module}")\n')
    stderr = failing_run(tmp_path / "run", engine_mapping(engine), env={"PYTHONPATH": str(shadow)})
    assert f"retriever `{engine}` needs its client library" in stderr
    assert f"pip install 'retrieval-eval[{engine}]'" in stderr


@pytest.mark.parametrize(("engine", "key"), [("qdrant", "url_env"), ("milvus", "url_env")])
def test_an_unreachable_engine_is_an_error_status_naming_the_setting(
    engine: str, key: str, tmp_path: Path, github: FakeGitHub
) -> None:
    port = _closed_port()
    config = (
        engine_mapping(engine) + f'[retrievers.{engine}]\n{key} = "ENGINE_URL"\ntimeout_s = 3\n'
    )
    result, sha = action_on_repo(
        tmp_path, github, config, extra_env={"ENGINE_URL": f"http://127.0.0.1:{port}"}
    )
    assert result.returncode == 2, result.log
    assert result.outputs["verdict"] == "error"
    assert f"retrievers.{engine}: cannot reach http://127.0.0.1:{port}" in result.log
    assert f"check retrievers.{engine}" in result.log
    assert [s["state"] for s in github.statuses_for(sha)][-1:] == ["error"]


def test_a_location_variable_that_is_not_set_is_named(tmp_path: Path) -> None:
    stderr = failing_run(
        tmp_path / "run",
        engine_mapping("lancedb") + '[retrievers.lancedb]\nurl_env = "TEAM_LANCEDB_URL"\n',
    )
    assert "retrievers.lancedb: the environment variable TEAM_LANCEDB_URL is not set" in stderr


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _collection_of_dimension(engine: str, store: Path, name: str, dimensions: int) -> None:
    """A team's collection made with the engine's own client: three records whose payload
    has `doc` and `text`, vectors of ``dimensions``."""
    vectors = np.random.default_rng(7).normal(size=(3, dimensions)).astype(np.float32)
    rows = [{"doc": f"notes/{n}", "text": f"note {n}"} for n in range(3)]
    if engine == "qdrant":
        from qdrant_client import QdrantClient, models

        client = QdrantClient(path=str(store))
        client.create_collection(
            name,
            vectors_config=models.VectorParams(size=dimensions, distance=models.Distance.COSINE),
        )
        client.upsert(
            name,
            points=[
                models.PointStruct(id=n, vector=vectors[n].tolist(), payload=rows[n])
                for n in range(3)
            ],
        )
        client.close()
    elif engine == "lancedb":
        import lancedb

        db = lancedb.connect(str(store))
        db.create_table(
            name,
            data=[{"id": str(n), **rows[n], "vector": vectors[n].tolist()} for n in range(3)],
        )
    else:
        # In a process of its own: Milvus Lite holds its file until the process ends.
        script = (
            "import sys, json\n"
            "from pymilvus import MilvusClient\n"
            "store, name, dimensions, rows = json.loads(sys.argv[1])\n"
            "client = MilvusClient(store)\n"
            "client.create_collection(name, dimension=dimensions, metric_type='COSINE')\n"
            "client.insert(name, data=rows)\n"
            "client.close()\n"
        )
        data = [{"id": n, **rows[n], "vector": vectors[n].tolist()} for n in range(3)]
        store.mkdir(parents=True, exist_ok=True)
        argument = json.dumps([str(store / LITE_FILE), name, dimensions, data])
        subprocess.run([sys.executable, "-c", script, argument], check=True, timeout=120)
