"""A precomputed run: rankings made elsewhere (a nightly batch, another CI job), read from a file.

Two formats:

- ``trec``: the six-column run, ``qid Q0 docid rank score run-name`` (whitespace
  separated; blank and ``#`` lines skipped, as trec_eval does), read in numpy by
  ``tools/trec/text``. Documents are ranked by score, ties by document id, as every
  retriever here ranks; the rank column is checked to be an integer but not used.
- ``jsonl``: one ``{"query_id": "...", "hits": [{"id", "score", "text"?}, ...]}``
  per line.

A query the file does not mention gets an empty result, and is counted
(``queries_missing``) so a report can say so. A hit without text gets its
document's text from the corpus, for groundedness and the judge. Tag filters
are applied here from the corpus's tags, with the usual rule: a filter no
document matches leaves nothing.
"""

from __future__ import annotations

import json
import math
import time
import zlib
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import numpy as np

from retrieval_eval.errors import ConfigError, InputError, RetrievalEvalError
from retrieval_eval.load.documents import Corpus
from retrieval_eval.load.input_files import (
    MAX_LINES,
    check_regular,
    open_maybe_gzipped,
    too_many_lines,
)
from retrieval_eval.retrieval.answers import normalise_hits
from retrieval_eval.retrieval.base import Hit, SearchResult
from retrieval_eval.retrieval.external.services_config import RunFileConfig
from retrieval_eval.retrieval.timed import QuerySpec, TimedResult
from retrieval_eval.tools.trec.text.files import read_ranked_run
from retrieval_eval.tools.trec.text.values import as_bytes_strings

Ranking = dict[str, list[Hit]]


class TrecRun:
    """A TREC run read by the numpy reader (``tools/trec/text``): columns, not objects.

    A run of 100,000 queries is a million lines; a shard of a sharded run asks for a
    quarter of its queries, so hits are made only for the queries asked for, all of them
    in one pass over the rows they hold.
    """

    def __init__(self, path: Path):
        columns = read_ranked_run(path)
        finite = np.isfinite(columns.value)
        if not bool(finite.all()):
            row = int(np.flatnonzero(~finite)[0])
            shown = str(float(columns.value[row]))
            raise InputError(f"score {shown!r} is not finite", file=path, line=columns.line_of(row))
        self._columns = columns
        self._path = path
        # Row range of each query: stretches are in file order, codes say whose each is.
        ends = np.append(columns.segment_starts[1:], columns.rows)
        position = np.empty(len(columns.query_ids), dtype=np.int64)
        position[columns.segment_codes] = np.arange(columns.segment_codes.size)
        self._starts = columns.segment_starts[position]
        self._ends = ends[position]
        self._code = {query_id: code for code, query_id in enumerate(columns.query_ids)}

    def __contains__(self, query_id: object) -> bool:
        return query_id in self._code

    def hits(self, query_ids: Sequence[str]) -> Ranking:
        """Hits (file order, no text) of each of ``query_ids`` the run holds."""
        codes = [self._code[q] for q in dict.fromkeys(query_ids) if q in self._code]
        if not codes:
            return {}
        starts, ends = self._starts[codes], self._ends[codes]
        lengths = ends - starts
        rows = np.repeat(ends - np.cumsum(lengths), lengths) + np.arange(int(lengths.sum()))
        raw = as_bytes_strings(self._columns.doc_words[rows]).tolist()
        scores = np.asarray(self._columns.value)[rows].tolist()
        try:
            doc_ids = [value.decode("utf-8") for value in raw]
        except UnicodeDecodeError:
            row = next(i for i, value in enumerate(raw) if not _is_utf8(value))
            raise InputError(
                "the document id is not UTF-8 text",
                file=self._path,
                line=self._columns.line_of(int(rows[row])),
            ) from None
        ranking: Ranking = {}
        at = 0
        for code, length in zip(codes, lengths.tolist(), strict=True):
            ranking[self._columns.query_ids[code]] = [
                Hit(doc_id=doc_ids[i], score=scores[i], text="") for i in range(at, at + length)
            ]
            at += length
        return ranking


def _is_utf8(value: bytes) -> bool:
    try:
        value.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def parse_jsonl_run(text: str, *, file: Path) -> Ranking:
    """``{"query_id", "hits": [{"id", "score", "text"?}]}`` lines → hits per query id."""
    runs: Ranking = {}
    # Lines end at "\n" only: str.splitlines() also splits at U+2028, U+2029 and U+0085,
    # which JSON allows unescaped inside a string (a hit's text may hold them).
    for number, line in enumerate(text.split("\n"), start=1):
        if number > MAX_LINES:
            raise too_many_lines(file)
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as error:
            raise InputError(f"not JSON ({error.msg})", file=file, line=number) from None
        if not isinstance(record, dict):
            raise InputError(
                'each line is an object {"query_id": ..., "hits": [...]}', file=file, line=number
            )
        query_id, hits = record.get("query_id"), record.get("hits")
        if not isinstance(query_id, str) or not query_id:
            raise InputError("`query_id` must be a non-empty string", file=file, line=number)
        if not isinstance(hits, list):
            raise InputError("`hits` must be a list", file=file, line=number)
        if query_id in runs:
            raise InputError(f"query {query_id!r} appears twice", file=file, line=number)
        parsed: list[Hit] = []
        for position, hit in enumerate(hits):
            if not isinstance(hit, dict) or not isinstance(hit.get("id"), str) or not hit["id"]:
                raise InputError(
                    f'hit {position} must be an object with a string "id"', file=file, line=number
                )
            text_value = hit.get("text", "")
            if not isinstance(text_value, str):
                raise InputError(
                    f"hit {position} ({hit['id']}): `text` must be a string", file=file, line=number
                )
            parsed.append(
                Hit(
                    doc_id=hit["id"],
                    score=_score(hit.get("score"), file, number),
                    text=text_value,
                )
            )
        runs[query_id] = parsed
    return runs


def _score(value: object, file: Path, line: int) -> float:
    try:
        if isinstance(value, bool) or not isinstance(value, str | int | float):
            raise ValueError
        score = float(value)
    except ValueError:
        raise InputError(f"score {value!r} is not a number", file=file, line=line) from None
    if not math.isfinite(score):
        raise InputError(f"score {value!r} is not finite", file=file, line=line)
    return score


def _read_text(path: Path) -> str:
    try:
        # A run is often shipped gzipped (run.gz); utf-8-sig: a byte-order mark (Windows
        # tools write one) is not part of a query id.
        with open_maybe_gzipped(path) as handle:
            return handle.read().decode("utf-8-sig")
    except InputError as error:  # inflates past its bound
        raise ConfigError(f"retrievers.run-file.path: {error.message}", file=path) from None
    except (OSError, EOFError, zlib.error, UnicodeDecodeError) as error:
        raise ConfigError(
            f"retrievers.run-file.path: cannot read it ({error})", file=path
        ) from None


class RunFileRetriever:
    name = "run-file"

    def __init__(self, config: RunFileConfig):
        self.config = config
        self.label = f"run file {config.path}"
        self._runs: Ranking | TrecRun = {}
        self._texts: dict[str, str] = {}
        self._tags: dict[str, frozenset[str]] = {}
        self.queries_missing: list[str] = []

    def index(self, corpus: Corpus) -> None:
        path = self.config.path
        if not path.exists():
            raise ConfigError("retrievers.run-file.path: no such file", file=path)
        try:
            check_regular(path)  # inside the repository's roots, and a regular file
        except InputError as error:
            raise ConfigError(f"retrievers.run-file.path: {error.message}", file=path) from None
        if self.config.format == "trec":
            self._runs = TrecRun(path)
        else:
            self._runs = parse_jsonl_run(_read_text(path), file=path)
        self._texts = {doc.id: doc.text for doc in corpus.documents}
        self._tags = {doc.id: frozenset(doc.tags) for doc in corpus.documents}
        self.queries_missing = []

    def search_queries(
        self,
        queries: Sequence[QuerySpec],
        k: int,
        *,
        on_result: Callable[[TimedResult], None] | None = None,
        on_warm: Callable[[], None] | None = None,
    ) -> list[TimedResult]:
        if on_warm is not None:
            on_warm()  # answers are read from the file: nothing to warm up
        self.queries_missing = [q.query_id for q in queries if q.query_id not in self._runs]
        runs = self._runs
        if isinstance(runs, TrecRun):  # hits made for these queries only, in one pass
            runs = runs.hits([q.query_id for q in queries])
        results: list[TimedResult] = []
        for query in queries:
            started = time.perf_counter()
            result = self._answer(runs.get(query.query_id, []), k, query.tags)
            timed = TimedResult(query.query_id, result, time.perf_counter() - started)
            results.append(timed)
            if on_result is not None:
                on_result(timed)
        return results

    def search(self, query: str, k: int, tags: Sequence[str] = ()) -> SearchResult:
        raise RetrievalEvalError(
            f"{self.label}: a run file answers by query id, so it cannot serve `{query}` "
            "on its own (it is not usable as a side of another retriever)"
        )

    def _answer(self, hits: list[Hit], k: int, tags: Sequence[str]) -> SearchResult:
        if tags:
            wanted = set(tags)
            hits = [hit for hit in hits if self._tags.get(hit.doc_id, frozenset()) & wanted]
        filled = [
            hit if hit.text else Hit(hit.doc_id, hit.score, self._texts.get(hit.doc_id, ""))
            for hit in hits
        ]
        return normalise_hits(filled, k, cost_usd=0.0, who=self.label)

    def describe(self) -> Mapping[str, object]:
        # The file's settings, not its content: a new nightly run is the same system.
        return {"retriever": self.name, "path": self.config.path.name, "format": self.config.format}
