"""The rules every corpus format shares: a duplicate id names both places, an empty
document is skipped and counted, and an empty corpus file is an error."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from retrieval_eval.errors import InputError
from retrieval_eval.load.corpus_builder import CorpusBuilder
from retrieval_eval.load.documents import Document

FILE = Path("notes/docs.jsonl")


def document(doc_id: str, line: int, text: str = "x") -> Document:
    return Document(id=doc_id, title="", text=text, source=f"{FILE}:{line}")


def test_a_duplicate_id_names_where_it_was_first_defined() -> None:
    builder = CorpusBuilder(FILE)
    builder.add(document("a", 1), file=FILE, line=1, empty=False)
    with pytest.raises(InputError) as caught:
        builder.add(document("a", 4), file=FILE, line=4, empty=False)
    assert str(caught.value) == (
        "notes/docs.jsonl:4: duplicate document id 'a' (first defined at notes/docs.jsonl:1); "
        "document ids must be unique"
    )


def test_an_empty_document_is_skipped_counted_and_still_taken_as_an_id() -> None:
    builder = CorpusBuilder(FILE)
    builder.add(document("blank", 1, ""), file=FILE, line=1, empty=True)
    builder.add(document("b", 2), file=FILE, line=2, empty=False)
    with pytest.raises(InputError, match="duplicate document id 'blank'"):
        builder.add(document("blank", 3), file=FILE, line=3, empty=False)
    corpus = builder.build_file(FILE, "JSON")
    assert [d.id for d in corpus.documents] == ["b"]
    assert corpus.skipped_empty == ("blank",)
    assert corpus.location == "notes/docs.jsonl"


def test_a_file_that_defines_nothing_is_an_error() -> None:
    with pytest.raises(InputError) as caught:
        CorpusBuilder(FILE).build_file(FILE, "JSON")
    assert str(caught.value) == (
        "notes/docs.jsonl: no documents in this file; a corpus file holds one JSON object per line"
    )
    only_empty = CorpusBuilder(FILE)
    only_empty.add(document("e", 1, ""), file=FILE, line=1, empty=True)
    assert only_empty.build_file(FILE, "JSON").documents == ()


@given(st.lists(st.tuples(st.sampled_from("abcdef"), st.booleans()), max_size=12))
def test_documents_keep_load_order_until_an_id_repeats(added: list[tuple[str, bool]]) -> None:
    builder = CorpusBuilder(FILE)
    seen: list[str] = []
    for line, (doc_id, empty) in enumerate(added, start=1):
        if doc_id in seen:
            with pytest.raises(
                InputError, match=f"first defined at {FILE}:{seen.index(doc_id) + 1}"
            ):
                builder.add(document(doc_id, line), file=FILE, line=line, empty=empty)
            return
        seen.append(doc_id)
        builder.add(document(doc_id, line), file=FILE, line=line, empty=empty)
    corpus = builder.build()
    assert [d.id for d in corpus.documents] == [
        i for i, (_, e) in zip(seen, added, strict=True) if not e
    ]
    assert list(corpus.skipped_empty) == [i for i, (_, e) in zip(seen, added, strict=True) if e]
