"""Reviewing fixtures by hand (`retrieval-eval review`): a dataset file's synthetic
fixtures, each shown with the retriever's top hits, or the unlabelled documents that
entered a regressed query's top k in a report. Every decision is written at once, so a
review stopped anywhere resumes where it was left."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from retrieval_eval.author.hole_review import HoleReview, HoleTally, candidates, read_report
from retrieval_eval.author.review import Console, DatasetLines, Review, SkipState, Tally
from retrieval_eval.compare.dense_model import retrievers_for
from retrieval_eval.errors import ConfigError
from retrieval_eval.load.corpus import load_corpus
from retrieval_eval.progress import stderr_log
from retrieval_eval.retrieval.registry import RETRIEVER_NAMES, build_retriever, close_retriever
from retrieval_eval.settings import RunSettings


@dataclass(frozen=True)
class Reviewed:
    """A dataset file's review; ``tally`` None: there was nothing to review."""

    tally: Tally | None
    left: int = 0


@dataclass(frozen=True)
class HolesReviewed:
    """A report's holes reviewed; ``tally`` None: every hole was decided already."""

    tally: HoleTally | None
    left: int = 0


def review_dataset(
    settings: RunSettings,
    dataset: Path,
    console: Console,
    *,
    retriever_name: str | None,
    include_skipped: bool,
) -> Reviewed:
    """Review ``dataset``'s synthetic fixtures beside the top hits of its retriever (the one
    the settings map the file to, unless one is named)."""
    lines = DatasetLines(dataset)
    state = SkipState(settings.cache_dir, dataset)
    if include_skipped:
        state.skipped.clear()
    name = retriever_name or settings.retriever_for(dataset.name) or "hybrid"
    if name not in RETRIEVER_NAMES:
        raise ConfigError(f"retriever {name!r} for {dataset.name} is not one of {RETRIEVER_NAMES}")
    corpus = load_corpus(settings.corpus)
    retriever = build_retriever(name, retrievers_for(settings, corpus))
    try:
        if not Review(lines, state, corpus, retriever, console).pending():
            return Reviewed(None)
        retriever.index(corpus)
        session = Review(lines, state, corpus, retriever, console)
        left = session.run()
    finally:
        close_retriever(retriever)
    return Reviewed(session.tally, left)


def review_holes(
    settings: RunSettings, report_path: Path, console: Console, *, include_skipped: bool
) -> HolesReviewed | None:
    """Review the unlabelled documents that entered a regressed query's top k in the
    report; accepting one adds it to its query's expected ids in the settings' dataset
    files. None: no such document entered any."""
    report = read_report(report_path)
    if not candidates(report):
        return None
    corpus = load_corpus(settings.corpus)
    session = HoleReview(
        report,
        settings.datasets,
        settings.cache_dir,
        {doc.id: doc for doc in corpus.documents},
        console,
        include_skipped=include_skipped,
    )
    for query_id in session.tally.gone:
        stderr_log(f"skipped {query_id}: no longer in its dataset file")
    if not session.queue:
        return HolesReviewed(None)
    left = session.run()
    return HolesReviewed(session.tally, left)
