"""Milvus's store on Milvus Lite, for real (a file in a folder, served by the milvus-lite
process pymilvus starts): the store contract, and a team's collection read as it is or
refused with the setting to change."""

from __future__ import annotations

from pathlib import Path

import pytest

from retrieval_eval.errors import ConfigError
from retrieval_eval.retrieval.external.engine import LocalFolder
from retrieval_eval.retrieval.external.engines_config import MilvusConfig
from retrieval_eval.retrieval.external.milvus_engine import LITE_FILE, MilvusStore
from tests.retrieval.external.store_contract import check_store

pytestmark = pytest.mark.slow  # Milvus Lite starts a server process of its own


def test_milvus_lite_keeps_searches_and_reads_back_our_collection(tmp_path: Path) -> None:
    folder = tmp_path / "milvus"
    store = MilvusStore(MilvusConfig(), LocalFolder(folder), None, None)
    assert store.describe() == {"search": "FLAT", "mode": "Milvus Lite"}
    # A name with a dash (an OURS_PREFIX collection) becomes one Milvus takes.
    check_store(store, "ours-0123")
    assert (folder / LITE_FILE).exists()

    # The same file searched as a team's collection: its FLAT index is exact search.
    team = MilvusStore(
        MilvusConfig(index="existing", collection="ours_0123", id_key="doc"),
        LocalFolder(folder),
        None,
        None,
    )
    assert team.open_existing("ours_0123") == 3
    assert (team.space, team.approximate) == ("cosine", False)
    with pytest.raises(ConfigError, match=r"no collection 'nots' on Milvus Lite \(it has: "):
        team.open_existing("nots")
    team.close()
    wrong = MilvusStore(
        MilvusConfig(index="existing", collection="ours_0123", vector_field="embedding"),
        LocalFolder(folder),
        None,
        None,
    )
    with pytest.raises(ConfigError, match=r"vector_field: collection 'ours_0123' has no field"):
        wrong.open_existing("ours_0123")
    wrong.close()
