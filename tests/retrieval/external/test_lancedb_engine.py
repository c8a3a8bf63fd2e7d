"""LanceDB's store in a folder, for real: the store contract, and a team's table read as
it is (its vector column, its index) or refused with the setting to change."""

from __future__ import annotations

from pathlib import Path

import lancedb
import pyarrow as pa
import pytest

from retrieval_eval.errors import ConfigError
from retrieval_eval.retrieval.external.engine import LocalFolder
from retrieval_eval.retrieval.external.engines_config import LanceDbConfig
from retrieval_eval.retrieval.external.lancedb_engine import LanceDbStore
from tests.retrieval.external.store_contract import QUERY, check_store


def store_in(folder: Path, **table: object) -> LanceDbStore:
    return LanceDbStore(LanceDbConfig.model_validate(table), LocalFolder(folder), None, None)


def test_a_folder_keeps_searches_and_reads_back_our_table(tmp_path: Path) -> None:
    store = store_in(tmp_path / "lancedb")
    assert (store.approximate, store.describe()) == (False, {"search": "exact"})
    check_store(store, "ours_0123")


def test_a_folder_of_its_own_is_removed_with_the_store() -> None:
    folder = LocalFolder(None)
    store = LanceDbStore(LanceDbConfig(), folder, None, None)
    assert store.open_ours("ours", 3, "fingerprint", 1) is False
    path = folder.path()
    assert path.is_dir()
    store.remove()
    assert not path.exists()


def team_table(folder: Path, name: str, rows: list[dict[str, object]]) -> None:
    lancedb.connect(str(folder)).create_table(name, data=rows)


def test_a_team_table_is_searched_by_its_own_columns(tmp_path: Path) -> None:
    folder = tmp_path / "team"
    team_table(
        folder,
        "notes",
        [
            {"doc": "near", "labels": ["x"], "embedding": [1.0, 0.0, 0.0]},
            {"doc": "far", "labels": ["y"], "embedding": [0.0, 0.0, 1.0]},
        ],
    )
    store = store_in(
        folder,
        index="existing",
        collection="notes",
        id_key="doc",
        tag_key="labels",
        vector_column="embedding",
    )
    assert store.open_existing("notes") == 3
    assert [r.payload["doc"] for r in store.search(QUERY, 2, [])] == ["near", "far"]
    assert [r.payload["doc"] for r in store.search(QUERY, 2, ["y"])] == ["far"]


def test_a_table_that_is_not_there_or_not_searchable_is_named(tmp_path: Path) -> None:
    folder = tmp_path / "team"
    team_table(folder, "notes", [{"doc": "a", "vector": [1.0, 0.0]}])
    team_table(folder, "loose", [{"id": "a", "vector": [0.0, 1.0]}])
    with pytest.raises(ConfigError, match=r"no table 'nots' in .* \(it has: loose, notes\)"):
        store_in(folder, index="existing", collection="nots").open_existing("nots")
    with pytest.raises(ConfigError, match=r"vector_column: table 'notes' has no column 'emb'"):
        store_in(
            folder, index="existing", collection="notes", id_key="doc", vector_column="emb"
        ).open_existing("notes")
    with pytest.raises(ConfigError, match=r"id_key: table 'notes' has no 'id' column"):
        store_in(folder, index="existing", collection="notes").open_existing("notes")


def test_a_column_of_lists_that_is_no_vector_column_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "team"
    schema = pa.schema([pa.field("id", pa.string()), pa.field("vector", pa.list_(pa.float32()))])
    lancedb.connect(str(folder)).create_table("loose", schema=schema)
    with pytest.raises(ConfigError, match=r"'vector' in 'loose' is list<item: float>, not a"):
        store_in(folder, index="existing", collection="loose").open_existing("loose")
