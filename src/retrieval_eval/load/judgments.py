"""The judged tier's files: its queries, and the judge's judgments of (query, document) pairs.

``queries.jsonl`` holds one query a line, ``{"query_id": ..., "query": ...}``: the format
`import queries` writes, whose other fields (suggested labels included) are ignored here,
since the judge, not a suggestion, decides what is relevant.

``judgments.jsonl`` is the tier's qrels, committed beside the queries: one judgment a line,
``{"query_id", "doc_id", "grade", "judge_model", "prompt_sha256", "doc_sha256"}``. A grade
is an integer, 0 for not relevant. A judgment holds only while the judge would be asked the
same question: the same model, the same prompt template (its sha256) and the same document
text (its sha256). When any of them differs it is stale and is judged again. The file is
written sorted by query id, then document id, so a new judgment is a one-line diff.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from retrieval_eval.errors import InputError
from retrieval_eval.fileio import atomic_write_text
from retrieval_eval.load.jsonl_lines import iter_objects_or_raise

JUDGMENT_FIELDS = ("query_id", "doc_id", "grade", "judge_model", "prompt_sha256", "doc_sha256")
_HEX = frozenset("0123456789abcdef")


def text_sha256(text: str) -> str:
    """The sha256 a document's text (and the judge's prompt template) is recorded by."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Judgment:
    query_id: str
    doc_id: str
    grade: int  # 0: not relevant; higher: more relevant
    judge_model: str
    prompt_sha256: str
    doc_sha256: str

    @property
    def pair(self) -> tuple[str, str]:
        return (self.query_id, self.doc_id)

    def is_current(self, *, model: str, prompt_sha256: str, doc_sha256: str) -> bool:
        """The judge would be asked exactly this question again."""
        return (
            self.judge_model == model
            and self.prompt_sha256 == prompt_sha256
            and self.doc_sha256 == doc_sha256
        )


class Judgments(Mapping[tuple[str, str], Judgment]):
    """An immutable collection of judgments, at most one per (query id, document id)."""

    def __init__(self, judgments: Iterable[Judgment] = ()) -> None:
        by_pair: dict[tuple[str, str], Judgment] = {}
        for judgment in judgments:
            by_pair[judgment.pair] = judgment  # a later one replaces an earlier one
        self._by_pair = by_pair
        by_query: dict[str, dict[str, Judgment]] = {}
        for (query_id, doc_id), judgment in by_pair.items():
            by_query.setdefault(query_id, {})[doc_id] = judgment
        self._by_query = by_query

    def __getitem__(self, pair: tuple[str, str]) -> Judgment:
        return self._by_pair[pair]

    def __iter__(self) -> Iterator[tuple[str, str]]:
        return iter(self._by_pair)

    def __len__(self) -> int:
        return len(self._by_pair)

    def __repr__(self) -> str:
        return f"Judgments({len(self)} pairs)"

    def current(
        self, query_id: str, doc_id: str, *, model: str, prompt_sha256: str, doc_sha256: str
    ) -> Judgment | None:
        """The pair's judgment; None when there is none or it is stale (another model,
        prompt template or document text)."""
        found = self._by_pair.get((query_id, doc_id))
        if found is None or not found.is_current(
            model=model, prompt_sha256=prompt_sha256, doc_sha256=doc_sha256
        ):
            return None
        return found

    def current_only(
        self, *, model: str, prompt_sha256: str, doc_sha256: Mapping[str, str]
    ) -> Judgments:
        """The judgments that are current; ``doc_sha256``: each document's text hash, from
        the corpus (a document no longer in it has no current judgment)."""
        return Judgments(
            j
            for j in self._by_pair.values()
            if j.doc_id in doc_sha256
            and j.is_current(
                model=model, prompt_sha256=prompt_sha256, doc_sha256=doc_sha256[j.doc_id]
            )
        )

    def graded(self, query_id: str) -> dict[str, int]:
        """Every judged document of the query and its grade (0 included): what judged@k
        counts."""
        return {doc_id: j.grade for doc_id, j in self._by_query.get(query_id, {}).items()}

    def relevant(self, query_id: str) -> dict[str, int]:
        """The query's relevant documents (grade above 0) and their grades, qrels-style: a
        document not here, judged 0 or not judged at all, counts as not relevant (trec_eval's
        convention). Call it on ``current_only(...)`` to leave stale judgments out."""
        return {doc_id: grade for doc_id, grade in self.graded(query_id).items() if grade > 0}

    def query_ids(self) -> tuple[str, ...]:
        return tuple(sorted(self._by_query))

    def merged(self, newer: Iterable[Judgment]) -> Judgments:
        """These judgments with ``newer`` ones replacing any of the same pair."""
        return Judgments((*self._by_pair.values(), *newer))


def read_judgments(path: Path) -> Judgments:
    """``judgments.jsonl``; a missing file is no judgment yet. A bad line is an
    ``InputError`` at ``FILE:LINE`` saying what to fix."""
    if not path.exists():
        return Judgments()
    found: list[Judgment] = []
    seen: dict[tuple[str, str], int] = {}
    for number, record in iter_objects_or_raise(path):
        judgment = _judgment(record, path, number)
        if judgment.pair in seen:
            raise InputError(
                f"the pair ({judgment.query_id!r}, {judgment.doc_id!r}) is judged twice (first "
                f"on line {seen[judgment.pair]}); keep one line per pair",
                file=path,
                line=number,
            )
        seen[judgment.pair] = number
        found.append(judgment)
    return Judgments(found)


def _judgment(record: Mapping[str, Any], path: Path, line: int) -> Judgment:
    missing = [name for name in JUDGMENT_FIELDS if name not in record]
    if missing:
        raise InputError(
            f"missing {', '.join(missing)}; each judgment needs {_FIELDS}", file=path, line=line
        )
    unknown = sorted(set(record) - set(JUDGMENT_FIELDS))
    if unknown:
        raise InputError(
            f"unknown field {unknown[0]!r}; a judgment has only {_FIELDS}", file=path, line=line
        )
    for name in ("query_id", "doc_id", "judge_model"):
        value = record[name]
        if not isinstance(value, str) or not value.strip():
            raise InputError(f"{name} must be a non-empty string", file=path, line=line)
    grade = record["grade"]
    if isinstance(grade, bool) or not isinstance(grade, int) or grade < 0:
        raise InputError(
            f"grade must be a whole number ≥ 0 (0 = not relevant), not {json.dumps(grade)}",
            file=path,
            line=line,
        )
    for name in ("prompt_sha256", "doc_sha256"):
        value = record[name]
        if not isinstance(value, str) or len(value) != 64 or not set(value) <= _HEX:
            raise InputError(
                f"{name} must be a sha256 in 64 lowercase hex digits", file=path, line=line
            )
    return Judgment(
        query_id=record["query_id"],
        doc_id=record["doc_id"],
        grade=grade,
        judge_model=record["judge_model"],
        prompt_sha256=record["prompt_sha256"],
        doc_sha256=record["doc_sha256"],
    )


_FIELDS = ", ".join(JUDGMENT_FIELDS)


def judgments_text(judgments: Iterable[Judgment]) -> str:
    """One JSON object a line, sorted by query id, then document id."""
    ordered = sorted(judgments, key=lambda j: j.pair)
    return "".join(json.dumps(asdict(j), ensure_ascii=False) + "\n" for j in ordered)


def write_judgments(path: Path, judgments: Judgments) -> str:
    """Replace ``path`` whole (atomically): a crash leaves the old file or the new one.
    Returns the sha256 of the bytes written, by which a later step tells that the file is
    still what was written (the retriever runs in the same workspace)."""
    atomic_write_text(path, judgments_text(judgments.values()))
    return hashlib.sha256(path.read_bytes()).hexdigest()


@dataclass(frozen=True)
class JudgedQuery:
    query_id: str
    query: str


def read_judged_queries(path: Path) -> tuple[JudgedQuery, ...]:
    """The tier's queries, in file order. A missing file, a bad line or a query id given
    twice is an ``InputError`` saying what to fix."""
    if not path.exists():
        raise InputError(
            "the judged tier's queries file does not exist; write it with "
            "`retrieval-eval import queries LOG --out` this path, or set [judged] queries",
            file=path,
        )
    found: list[JudgedQuery] = []
    seen: dict[str, int] = {}
    for number, record in iter_objects_or_raise(path):
        query_id, query = record.get("query_id"), record.get("query")
        if not isinstance(query_id, str) or not query_id.strip():
            raise InputError("query_id must be a non-empty string", file=path, line=number)
        if not isinstance(query, str) or not query.strip():
            raise InputError("query must be a non-empty string", file=path, line=number)
        if query_id in seen:
            raise InputError(
                f"query_id {query_id!r} is used twice (first on line {seen[query_id]}); "
                "give each query its own id",
                file=path,
                line=number,
            )
        seen[query_id] = number
        found.append(JudgedQuery(query_id, query))
    return tuple(found)
