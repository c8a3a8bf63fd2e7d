"""Read a BEIR folder: ``corpus.jsonl``, ``queries.jsonl`` (either may be gzipped) and
``qrels/<split>.tsv``.

BEIR is an outside format, so unlike our own JSONL corpus it tolerates fields
we do not use; but anything we rely on (ids, text, integer grades, a judged
query or document that exists) is checked and reported with FILE:LINE.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from retrieval_eval.errors import InputError
from retrieval_eval.load.corpus_builder import CorpusBuilder
from retrieval_eval.load.documents import Corpus, Document
from retrieval_eval.load.jsonl_lines import iter_lines_or_raise, iter_objects_or_raise


@dataclass(frozen=True)
class BeirData:
    """A BEIR split. ``queries`` holds only the queries judged in the split (as BEIR's own
    loader does); ``qrels`` keeps grades exactly as written, including 0 and negatives,
    which trec_eval treats as "not relevant"."""

    corpus: Corpus
    queries: dict[str, str]
    qrels: dict[str, dict[str, int]]
    notes: tuple[str, ...] = ()  # what was set aside, for the user to see

    def judgment_count(self) -> int:
        return sum(len(judged) for judged in self.qrels.values())


def load_beir(directory: Path, split: str = "test") -> BeirData:
    """Load corpus, the split's qrels and the queries they judge."""
    qrels_path = directory / "qrels" / f"{split}.tsv"
    if not qrels_path.is_file():
        available = sorted(p.stem for p in (directory / "qrels").glob("*.tsv"))
        hint = f" (available splits: {', '.join(available)})" if available else ""
        raise InputError(f"no qrels for split {split!r}{hint}", file=qrels_path)
    corpus = load_beir_corpus(directory)
    all_queries, empty = _load_queries(directory)
    qrels = _load_qrels(
        qrels_path, all_queries, corpus.ids() | frozenset(corpus.skipped_empty), empty
    )
    if not qrels:
        raise InputError(
            "no judgments in this split; expected lines of query-id, corpus-id, score",
            file=qrels_path,
        )
    queries = {query_id: all_queries[query_id] for query_id in qrels}
    notes: tuple[str, ...] = ()
    if empty:
        path, _ = next(iter(empty.values()))
        shown = ", ".join(repr(query_id) for query_id in list(empty)[:5])
        more = f" and {len(empty) - 5} more" if len(empty) > 5 else ""
        notes = (
            f"{path}: skipped {len(empty)} quer{'y' if len(empty) == 1 else 'ies'} without "
            f"text that the {split!r} split does not judge ({shown}{more})",
        )
    return BeirData(corpus=corpus, queries=queries, qrels=qrels, notes=notes)


def beir_file(directory: Path, name: str) -> Path | None:
    """``name`` in the folder, else ``name.gz`` (as BEIR's copies on the Hugging Face Hub
    ship ``corpus.jsonl.gz`` and ``queries.jsonl.gz``), else None."""
    for candidate in (directory / name, directory / f"{name}.gz"):
        if candidate.is_file():
            return candidate
    return None


def _required_file(directory: Path, name: str) -> Path:
    path = beir_file(directory, name)
    if path is None:
        raise InputError(f"not a BEIR folder: {name} (or {name}.gz) is missing", file=directory)
    return path


def load_beir_corpus(directory: Path) -> Corpus:
    path = _required_file(directory, "corpus.jsonl")
    builder = CorpusBuilder(directory)
    for number, record in iter_objects_or_raise(path):
        doc_id = _required_id(record, path, number)
        title = _optional_text(record, "title", path, number)
        text = _optional_text(record, "text", path, number)
        metadata = record.get("metadata") or {}
        if not isinstance(metadata, dict):
            raise InputError("'metadata' must be a JSON object", file=path, line=number)
        document = Document(
            id=doc_id, title=title, text=text, metadata=metadata, source=f"{path}:{number}"
        )
        builder.add(document, file=path, line=number, empty=not (title.strip() or text.strip()))
    return builder.build_file(path, '{"_id", "title", "text"}')


def _load_queries(directory: Path) -> tuple[dict[str, str], dict[str, tuple[Path, int]]]:
    """The queries with text, and where each query without text is (an error only if
    the split judges it: some published collections carry unjudged empty queries)."""
    path = _required_file(directory, "queries.jsonl")
    queries: dict[str, str] = {}
    empty: dict[str, tuple[Path, int]] = {}
    first_line: dict[str, int] = {}
    for number, record in iter_objects_or_raise(path):
        query_id = _required_id(record, path, number)
        if query_id in first_line:
            raise InputError(
                f"duplicate query id {query_id!r} (first defined at {path}:{first_line[query_id]})",
                file=path,
                line=number,
            )
        text = _optional_text(record, "text", path, number)
        first_line[query_id] = number
        if text.strip():
            queries[query_id] = text
        else:
            empty[query_id] = (path, number)
    return queries, empty


def _load_qrels(
    path: Path,
    queries: dict[str, str],
    document_ids: frozenset[str],
    empty_queries: dict[str, tuple[Path, int]],
) -> dict[str, dict[str, int]]:
    qrels: dict[str, dict[str, int]] = {}
    first = True
    for number, text in iter_lines_or_raise(path):
        header_allowed, first = first, False
        # Surrounding whitespace is not a column: "q1\td1\t1\t" has three.
        text = text.strip()
        columns = text.split("\t") if "\t" in text else text.split()
        if len(columns) == 4:  # TREC qrels layout: query, iteration, document, grade
            columns = [columns[0], columns[2], columns[3]]
        if len(columns) != 3:
            raise InputError(
                "expected 3 tab-separated columns (query-id, corpus-id, score), "
                f"got {len(columns)}",
                file=path,
                line=number,
            )
        query_id, doc_id, grade_text = (column.strip() for column in columns)
        # ASCII digits only: int() would also read "1_0" as 10 and "١" (Arabic-Indic) as 1.
        if _INTEGER.fullmatch(grade_text) is None:
            # The header BEIR writes (query-id corpus-id score), or any names: no digits, so a
            # first judgment with a bad grade ("1.0") is reported rather than skipped.
            if header_allowed and not any(char.isdigit() for char in grade_text):
                continue
            raise InputError(f"score {grade_text!r} is not an integer", file=path, line=number)
        grade = int(grade_text)
        if not -_MAX_GRADE - 1 <= grade <= _MAX_GRADE:  # grades are scored as int64
            raise InputError(
                f"score {grade_text!r} is out of range; grades must lie within ±{_MAX_GRADE:,}",
                file=path,
                line=number,
            )
        if query_id in empty_queries:
            where, line = empty_queries[query_id]
            raise InputError(
                f"query {query_id!r} has no text, and {path.name} judges it (line {number}); "
                "give it its text or remove its judgments",
                file=where,
                line=line,
            )
        if query_id not in queries:
            raise InputError(
                f"query id {query_id!r} is not in queries.jsonl", file=path, line=number
            )
        if doc_id not in document_ids:
            raise InputError(f"corpus id {doc_id!r} is not in corpus.jsonl", file=path, line=number)
        judged = qrels.setdefault(query_id, {})
        if doc_id in judged:
            raise InputError(
                f"query {query_id!r} judges document {doc_id!r} twice", file=path, line=number
            )
        judged[doc_id] = grade
    return qrels


_INTEGER = re.compile(r"[+-]?[0-9]+")
_MAX_GRADE = 2**63 - 1


def _required_id(record: dict[str, Any], path: Path, number: int) -> str:
    if "_id" not in record and "id" in record:
        raise InputError(
            "no '_id' field, but an 'id' one: BEIR names its ids '_id'; rename the field "
            "(for example: jq -c '{_id: .id} + del(.id)' FILE)",
            file=path,
            line=number,
        )
    value = record.get("_id")
    # Some BEIR exports write numeric ids; they name the same document as their string form.
    if isinstance(value, int) and not isinstance(value, bool):
        value = str(value)
    if not isinstance(value, str) or not value.strip():
        raise InputError("'_id' must be a non-empty string", file=path, line=number)
    return value


def _optional_text(record: dict[str, Any], key: str, path: Path, number: int) -> str:
    value = record.get(key, "")
    if value is None:
        return ""
    if not isinstance(value, str):
        raise InputError(f"{key!r} must be a string", file=path, line=number)
    return value
