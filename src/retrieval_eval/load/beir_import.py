"""Convert a BEIR split into our own corpus and dataset files, so public benchmarks
run through exactly the same path (validate, evaluate, gate) as a user's golden set.

Mapping, chosen so nothing in the judgments is lost:
- every BEIR document becomes a line of ``documents.jsonl`` (``_id`` → ``id``), empty
  ones included, so document counts round-trip; the file is deliberately not named
  ``corpus.jsonl``, which would make the folder look like a BEIR folder again;
- every judged query becomes one fixture in ``<retrieval_type>.jsonl``
  (``hybrid`` unless chosen otherwise: the official judgments do not depend on the
  retriever), ``ground_truth_source: human-annotated``;
- documents with a grade ≥ 1 are the expected ids, best grade first, then in qrels
  order; when grades differ from 1 they are kept in ``relevance`` for graded NDCG;
  grades ≤ 0 mean "judged not relevant" and are left out (our format has no negative
  judgments), and a query left with no relevant document is skipped and counted.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from retrieval_eval.errors import InputError
from retrieval_eval.fileio import atomic_write_text
from retrieval_eval.load.beir import BeirData
from retrieval_eval.load.fixtures import Fixture, RetrievalType

CORPUS_FILE_NAME = "documents.jsonl"


@dataclass(frozen=True)
class BeirImport:
    corpus_file: Path
    dataset_file: Path
    documents: int
    fixtures: int
    judgments: int
    skipped_queries: tuple[str, ...]


def import_beir(
    data: BeirData, out_dir: Path, *, retrieval_type: RetrievalType, overwrite: bool
) -> BeirImport:
    corpus_file = out_dir / CORPUS_FILE_NAME
    dataset_file = out_dir / f"{retrieval_type}.jsonl"
    if not overwrite:
        for target in (corpus_file, dataset_file):
            if target.exists():
                raise InputError("already exists; pass --force to overwrite it", file=target)

    document_lines = [
        _json_line(
            {"id": doc.id, "title": doc.title, "text": doc.text, "metadata": dict(doc.metadata)}
        )
        if doc.metadata
        else _json_line({"id": doc.id, "title": doc.title, "text": doc.text})
        for doc in data.corpus.documents
    ]
    document_lines += [
        _json_line({"id": doc_id, "title": "", "text": ""}) for doc_id in data.corpus.skipped_empty
    ]

    fixture_lines: list[str] = []
    skipped: list[str] = []
    judgments = 0
    for query_id, query in data.queries.items():
        judged = data.qrels.get(query_id, {})
        relevant = [(doc_id, grade) for doc_id, grade in judged.items() if grade >= 1]
        if not relevant:
            skipped.append(query_id)
            continue
        relevant.sort(key=lambda item: -item[1])  # stable: equal grades keep qrels order
        judgments += len(relevant)
        fixture = Fixture(
            query_id=query_id,
            query=query,
            retrieval_type=retrieval_type,
            expected_top_k_ids=[doc_id for doc_id, _ in relevant],
            ground_truth_source="human-annotated",
            relevance=dict(relevant) if any(grade != 1 for _, grade in relevant) else {},
        )
        fixture_lines.append(_json_line(fixture.model_dump(mode="json", exclude_defaults=True)))

    atomic_write_text(corpus_file, "".join(document_lines))
    atomic_write_text(dataset_file, "".join(fixture_lines))
    return BeirImport(
        corpus_file=corpus_file,
        dataset_file=dataset_file,
        documents=len(document_lines),
        fixtures=len(fixture_lines),
        judgments=judgments,
        skipped_queries=tuple(skipped),
    )


def _json_line(record: dict[str, Any]) -> str:
    return json.dumps(record, ensure_ascii=False) + "\n"
