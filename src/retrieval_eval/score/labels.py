"""How much of what the retriever returned the golden sets say anything about.

A document in a query's top k that is not among its expected ids is *unlabelled*:
the metrics score it as not relevant, which is right only if someone looked at it.
When a retriever starts returning documents nobody labelled, its scores may fall
for want of labels rather than of quality; the labelled share at k (trec_eval's
judged share of ``num_ret``) shows that. ``expect_empty`` fixtures have no golden
set and are left out, as they are of every mean.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from itertools import repeat
from operator import attrgetter

from retrieval_eval.results import LabelCoverage, QueryResult


def unlabelled_at(retrieved: Sequence[str], golden: Collection[str], k: int) -> tuple[str, ...]:
    """The top ``k`` ids that are not in ``golden``, best first."""
    return tuple(doc_id for doc_id in retrieved[:k] if doc_id not in golden)


def label_coverage(queries: Sequence[QueryResult], k: int) -> LabelCoverage:
    """The labelled share of the results at ``k`` over the queries that have a golden set."""
    # Whole columns read at C speed (map): a merge passes over 100,000 queries here.
    counts: list[int | None] = list(map(attrgetter("unlabelled_at_k"), queries))
    counted: Iterable[QueryResult] = queries
    if None in counts:
        counted = [q for q, count in zip(queries, counts, strict=True) if count is not None]
    retrieved = sum(map(min, map(len, map(attrgetter("retrieved"), counted)), repeat(k)))
    unlabelled = sum(count for count in counts if count is not None)
    labelled = retrieved - unlabelled
    return LabelCoverage(
        retrieved=retrieved,
        labelled=labelled,
        share=labelled / retrieved if retrieved else None,
    )
