"""What every engine's Store must do, checked on the engine itself (Qdrant local mode,
LanceDB in a folder, Milvus Lite): our collection made, filled, searched best first by
cosine similarity, filtered by ANY of the tags, read back whole, and reused only while it
holds the same number of chunks."""

from __future__ import annotations

from typing import Any

import numpy as np

from retrieval_eval.retrieval.external.engine import CHUNK_KEY, DOC_KEY, TAGS_KEY, TEXT_KEY, Store

ROWS: list[dict[str, Any]] = [
    {CHUNK_KEY: "a#0", DOC_KEY: "a", TEXT_KEY: "first of a", TAGS_KEY: ["red"]},
    {CHUNK_KEY: "a#1", DOC_KEY: "a", TEXT_KEY: "second of a", TAGS_KEY: ["red"]},
    {CHUNK_KEY: "b#0", DOC_KEY: "b", TEXT_KEY: "b's only", TAGS_KEY: ["it's", "blue"]},
    {CHUNK_KEY: "c#0", DOC_KEY: "c", TEXT_KEY: "untagged c", TAGS_KEY: []},
]
VECTORS = np.array(
    [[1.0, 0.0, 0.0], [0.6, 0.8, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]], dtype=np.float32
)
QUERY = np.array([0.8, 0.6, 0.0], dtype=np.float32)
# Cosine similarity of QUERY with each row (all unit vectors): a#0 0.8, a#1 0.96, b#0 0.6,
# c#0 0.
SIMILARITY = {"a#0": 0.8, "a#1": 0.96, "b#0": 0.6, "c#0": 0.0}


def chunk(record: Any) -> str:
    return str(record.payload.get(CHUNK_KEY, record.record_id))


def check_store(store: Store, name: str) -> None:
    assert store.open_ours(name, 3, "fingerprint", len(ROWS)) is False
    store.add(ROWS, VECTORS)
    assert store.count() == len(ROWS)

    found = store.search(QUERY, 3, [])
    assert [chunk(r) for r in found] == ["a#1", "a#0", "b#0"]
    for record in found:
        assert abs(record.score - SIMILARITY[chunk(record)]) < 1e-5
    assert found[0].payload[DOC_KEY] == "a"
    assert found[0].payload[TEXT_KEY] == "second of a"

    # ANY of the tags; a tag with a quote in it is a value, not part of the query.
    assert sorted(chunk(r) for r in store.search(QUERY, 4, ["it's", "red"])) == [
        "a#0",
        "a#1",
        "b#0",
    ]
    assert [chunk(r) for r in store.search(QUERY, 4, ["blue"])] == ["b#0"]
    assert store.search(QUERY, 4, ["green"]) == []

    scanned = {chunk(r): r for r in store.scan()}
    assert sorted(scanned) == sorted(SIMILARITY)
    for row, vector in zip(ROWS, VECTORS, strict=True):
        assert np.allclose(np.asarray(scanned[row[CHUNK_KEY]].vector), vector)

    # Kept and reused while it holds the chunks; rebuilt when it holds another count.
    store.close()
    assert store.open_ours(name, 3, "fingerprint", len(ROWS)) is True
    assert store.count() == len(ROWS)
    store.close()
    assert store.open_ours(name, 3, "fingerprint", len(ROWS) - 1) is False
    assert store.count() == 0
    store.close()
