"""The corpus every later stage sees: its ids, its tags, and a fingerprint that changes
with the content and with nothing else (load order, metadata, where it was loaded from)."""

from __future__ import annotations

from random import Random

from hypothesis import given
from hypothesis import strategies as st

from retrieval_eval.load.documents import Corpus, Document

DOCS = (
    Document(id="a", title="Bread", text="rest the dough", tags=("recipes", "bread")),
    Document(id="b", title="Lisbon", text="trams", tags=("travel",), metadata={"lang": "pt"}),
)


def test_ids_and_tags_span_every_document() -> None:
    corpus = Corpus(documents=DOCS, location="notes")
    assert corpus.ids() == {"a", "b"}
    assert corpus.tags() == {"recipes", "bread", "travel"}


def test_the_fingerprint_follows_the_content() -> None:
    corpus = Corpus(documents=DOCS, location="notes")
    assert len(corpus.fingerprint()) == 64
    edited = Document(id="a", title="Bread", text="rest the dough overnight", tags=("bread",))
    assert Corpus(documents=(edited, DOCS[1]), location="notes").fingerprint() != (
        corpus.fingerprint()
    )
    retagged = Document(id="a", title="Bread", text="rest the dough", tags=("recipes",))
    assert Corpus(documents=(retagged, DOCS[1]), location="notes").fingerprint() != (
        corpus.fingerprint()
    )


_documents = st.lists(
    st.builds(
        Document,
        id=st.text(min_size=1, max_size=5),
        title=st.text(max_size=5),
        text=st.text(max_size=10),
        tags=st.lists(st.text(min_size=1, max_size=4), max_size=3).map(tuple),
        source=st.text(max_size=5),
    ),
    max_size=6,
    unique_by=lambda d: d.id,
)


@given(_documents, st.randoms())
def test_the_fingerprint_ignores_order_source_and_location(
    documents: list[Document], random: Random
) -> None:
    shuffled = list(documents)
    random.shuffle(shuffled)
    moved = [
        Document(id=d.id, title=d.title, text=d.text, tags=tuple(reversed(d.tags)), source="x")
        for d in shuffled
    ]
    assert (
        Corpus(documents=tuple(documents), location="a").fingerprint()
        == Corpus(documents=tuple(moved), location="b", skipped_empty=("gone",)).fingerprint()
    )
