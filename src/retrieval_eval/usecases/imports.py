"""Golden datasets made from what a team already has (`retrieval-eval import`): a public
benchmark's BEIR folder, or a log of the queries people sent.

A logged query becomes a candidate fixture labelled by its clicks, else by a retriever's
top hits; every candidate is synthetic until `retrieval-eval review` accepts it. With
redaction, nothing below the log's reader (the retriever, its caches, the file) sees the
original text.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from retrieval_eval.author.pii import Pattern, redact
from retrieval_eval.author.query_import import (
    candidate_fixture,
    group_queries,
    normalised,
    sample_groups,
)
from retrieval_eval.compare.dense_model import retrievers_for
from retrieval_eval.errors import InputError
from retrieval_eval.fileio import atomic_write_text
from retrieval_eval.load.beir import load_beir
from retrieval_eval.load.beir_import import BeirImport, import_beir
from retrieval_eval.load.corpus import load_corpus
from retrieval_eval.load.fixtures import LocatedFixture, RetrievalType
from retrieval_eval.load.query_log import log_format, read_query_log
from retrieval_eval.progress import stderr_log
from retrieval_eval.retrieval.registry import build_retriever, close_retriever
from retrieval_eval.settings import RunSettings
from retrieval_eval.validate.fixture_file import read_fixture_file


def import_beir_folder(
    directory: Path, out_dir: Path, *, split: str, retrieval_type: RetrievalType, force: bool
) -> BeirImport:
    """OUT/documents.jsonl and OUT/<retrieval-type>.jsonl from the BEIR folder: official
    qrels become human-annotated fixtures, graded judgments `relevance`."""
    return import_beir(
        load_beir(directory, split), out_dir, retrieval_type=retrieval_type, overwrite=force
    )


@dataclass(frozen=True)
class QueryImport:
    """What the user asked for, beside the settings."""

    log_file: Path
    log_format: str | None  # None: from the file name
    sample: int | None  # None: every distinct query
    stratify: str | None
    seed: int
    patterns: tuple[Pattern, ...]  # redacted before anything else sees the text
    retrieval_type: RetrievalType
    out: Path | None  # None: <datasets>/<retrieval-type>.jsonl
    retriever_name: str | None  # None: the one the settings map the file to
    top: int
    append: bool
    force: bool


@dataclass(frozen=True)
class QueriesImported:
    target: Path
    records: int  # log records read
    sent: int  # queries sent, counting repeats
    distinct: int  # distinct queries (new ones, with ``append``)
    written: int
    retriever: str
    sources: dict[str, int] = field(default_factory=dict)  # "clicks" / "retriever" -> count
    skipped: int = 0  # no click in the corpus and no hit


def import_queries(settings: RunSettings, request: QueryImport) -> QueriesImported:
    """Write candidate fixtures for a sample of the log's distinct queries."""
    target = request.out or settings.datasets / f"{request.retrieval_type}.jsonl"
    if target.exists() and not (request.force or request.append):
        raise InputError(
            "exists; pass --append to add to it, or --force to replace it", file=target
        )
    logged = read_query_log(request.log_file, log_format(request.log_file, request.log_format))
    patterns = request.patterns
    # Redacted first: nothing below (the retriever, its caches, the file) sees the original.
    records = [
        (
            redact(q.query, patterns) if patterns else q.query,
            q.clicked,
            q.count,
            {k: redact(v, patterns) for k, v in q.fields.items()} if patterns else q.fields,
        )
        for q in logged
    ]
    stratify = request.stratify
    if stratify is not None and not any(stratify in fields for *_, fields in records):
        raise InputError(
            f"no record has a {stratify!r} field to stratify by", file=request.log_file
        )
    groups = group_queries(records, stratify)
    existing = _existing_queries(target) if request.append else set()
    groups = [g for g in groups if g.key not in existing]
    chosen = sample_groups(groups, request.sample, request.seed)
    corpus = load_corpus(settings.corpus)
    known = {doc.id for doc in corpus.documents}
    needs_retriever = any(not any(c in known for c in g.clicks) for g in chosen)
    name = request.retriever_name or settings.retriever_for(target.name) or "hybrid"
    retriever = build_retriever(name, retrievers_for(settings, corpus)) if needs_retriever else None
    lines: list[str] = []
    sources = {"clicks": 0, "retriever": 0}
    skipped = 0
    try:
        if retriever is not None:
            stderr_log(f"indexing {len(corpus.documents)} documents for {name}")
            retriever.index(corpus)
        for group in chosen:
            made = candidate_fixture(
                group,
                retrieval_type=request.retrieval_type,
                known_ids=known.__contains__,
                top_hits=lambda text: (
                    [hit.doc_id for hit in retriever.search(text, request.top, ()).hits]
                    if retriever is not None
                    else []
                ),
                stratify=stratify,
            )
            if made is None:
                skipped += 1
                continue
            record, source = made
            sources[source] += 1
            lines.append(json.dumps(record, ensure_ascii=False))
    finally:
        if retriever is not None:
            close_retriever(retriever)
    kept = target.read_text(encoding="utf-8") if request.append and target.exists() else ""
    if kept and not kept.endswith("\n"):
        kept += "\n"
    atomic_write_text(target, kept + "".join(line + "\n" for line in lines))
    return QueriesImported(
        target=target,
        records=len(logged),
        sent=sum(q.count for q in logged),
        distinct=len(groups),
        written=len(lines),
        retriever=name,
        sources=sources,
        skipped=skipped,
    )


def _existing_queries(path: Path) -> set[str]:
    """The normalised texts of the queries already in ``path`` (for --append)."""
    if not path.exists():
        return set()
    found = set()
    for item in read_fixture_file(path):
        if isinstance(item, LocatedFixture):
            found.add(normalised(item.fixture.query))
        else:
            raise InputError(f"{item.message}; fix it before --append", file=path, line=item.line)
    return found
