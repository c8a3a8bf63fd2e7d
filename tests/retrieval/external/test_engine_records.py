"""An engine's records turned into documents (what every engine's search answers with):
a document ranks by its best record, ties by id, and a record without the id field is an
error naming the fields it has; an engine that cannot be reached is one message naming
the setting."""

from __future__ import annotations

import pytest

from retrieval_eval.errors import ConfigError
from retrieval_eval.retrieval.base import Hit
from retrieval_eval.retrieval.external.engine import Record, collapse_records, unreachable


def test_a_document_ranks_by_its_best_record_with_that_record_s_text() -> None:
    records = [
        Record("1", 0.5, {"doc": "b", "body": "b low"}),
        Record("2", 0.9, {"doc": "a", "body": "a high"}),
        Record("3", 0.7, {"doc": "b", "body": "b high"}),
        Record("4", 0.7, {"doc": "a0", "body": 42}),
    ]
    assert collapse_records(records, "doc", "body", "retrievers.qdrant") == [
        Hit("a", 0.9, "a high"),
        Hit("a0", 0.7, "42"),  # a tie goes to the smaller id; a non-text value as text
        Hit("b", 0.7, "b high"),
    ]


def test_without_an_id_key_the_record_s_own_id_is_the_document() -> None:
    hits = collapse_records([Record("r1", 1.0, {"text": "x"})], None, None, "retrievers.milvus")
    assert hits == [Hit("r1", 1.0, "")]


@pytest.mark.parametrize("value", [None, ""])
def test_a_record_without_the_id_field_names_the_fields_it_has(value: str | None) -> None:
    payload = {"title": "t", "source": "s"} if value is None else {"doc_id": value, "title": "t"}
    with pytest.raises(ConfigError) as raised:
        collapse_records([Record("r9", 1.0, payload)], "doc_id", None, "retrievers.lancedb")
    message = str(raised.value)
    assert message.startswith("retrievers.lancedb.id_key: record 'r9' has no payload field")
    assert f"(its fields: {', '.join(sorted(payload))})" in message


def test_an_unreachable_engine_says_where_why_and_which_setting() -> None:
    error = unreachable(
        "retrievers.qdrant",
        "http://127.0.0.1:9",
        ConnectionError("refused\nsecond line of detail"),
        "retrievers.qdrant.url",
    )
    assert str(error) == (
        "retrievers.qdrant: cannot reach http://127.0.0.1:9 (ConnectionError: refused); "
        "check retrievers.qdrant.url (or url_env), or remove it to run the engine embedded "
        "in the cache folder"
    )
    assert "(TimeoutError: TimeoutError)" in str(
        unreachable("retrievers.milvus", "x", TimeoutError(), "retrievers.milvus.url")
    )
