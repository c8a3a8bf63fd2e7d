"""trec_eval's numbers and its three-column output, from TREC files.

Query set, averaging and printing follow trec_eval 10.0: queries present in both
files (every qrels query with ``complete``, trec_eval's ``-c``), including those
whose judgments are all non-relevant (they score 0); per-query lines in query-id
order; measures in trec_eval's table order; floats as ``%6.4f``, counts as
integers, names left-aligned in 22 columns. ``runid``, ``num_q``, ``gm_map`` and
``gm_bpref`` print only on the summary line, ``relstring`` only per query.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import numpy as np

from retrieval_eval.errors import ConfigError, InputError
from retrieval_eval.score.ranked import FloatArray
from retrieval_eval.tools.trec.join import JudgmentsByQuery, judge_run, reject_duplicate_results
from retrieval_eval.tools.trec.kernels import relstring, summarise, trec_values
from retrieval_eval.tools.trec.measures import (
    PER_QUERY_ONLY,
    SUMMARY_ONLY,
    TrecMeasure,
    parse_trec_measures,
)
from retrieval_eval.tools.trec.text.files import (
    BUCKET_QUERIES,
    PIECE_ROWS,
    Columns,
    NotContiguousError,
    bucketed_run,
    read_qrels,
    read_run,
    stream_run,
)


@dataclass(frozen=True)
class TrecResult:
    """Per-query values (aligned with ``query_ids``) and the summary of each measure."""

    query_ids: Sequence[str]
    measures: tuple[TrecMeasure, ...]
    per_query: dict[str, FloatArray]  # printed name -> values
    summary: dict[str, float]  # printed name -> value
    runid: str
    text: dict[str, tuple[str, ...]]  # printed name -> per-query text (relstring)


def score_trec_run(
    qrels_path: Path,
    run_path: Path,
    measure_names: tuple[str, ...] = (),
    *,
    complete: bool = False,
    level: int = 1,
    max_docs: int | None = None,
    piece_rows: int = PIECE_ROWS,
    bucket_queries: int = BUCKET_QUERIES,
    in_pieces: bool = True,
) -> TrecResult:
    """``level`` is trec_eval's ``-l`` (lowest relevant grade), ``max_docs`` its ``-M``.

    A run whose queries each sit in one stretch of lines is scored a piece of about
    ``piece_rows`` lines at a time (see :func:`_score_pieces`), so memory stays
    bounded; any other run is scored a bucket of ``bucket_queries`` queries at a time
    once it has been read (:func:`bucketed_run`). A run with ``complete``, a pipe, or any
    run when ``in_pieces`` is off, is read whole first. The output is the same every way:
    on any input error the whole-file path runs, so the message is the one it gives.
    """
    if level < 0:
        raise ConfigError(f"relevance level {level} is negative; use 0 or more")
    if max_docs is not None and max_docs < 1:
        raise ConfigError(f"max documents per query {max_docs} must be 1 or more")
    measures = tuple(parse_trec_measures(measure_names))
    qrels = read_qrels(qrels_path)
    # Only a regular file can be read again, as the whole-file path does after a streamed
    # read finds scattered lines or an error; a pipe is read once, whole.
    if in_pieces and not complete and run_path.is_file():
        pieces = _score_pieces(qrels, measures, level, max_docs)
        try:
            try:
                scored = pieces(stream_run(run_path, piece_rows))
            except NotContiguousError:
                scored = pieces(bucketed_run(run_path, piece_rows, bucket_queries))
        except InputError:
            scored = None
        if scored is not None:
            return scored
    run = read_run(run_path)
    hits = judge_run(qrels, run, complete=complete, max_docs=max_docs)
    if hits.num_queries == 0:
        raise InputError(
            "no query has both results in the run and judgments in the qrels; check the query ids",
            file=run_path,
        )
    per_query: dict[str, FloatArray] = {}
    summary: dict[str, float] = {}
    text: dict[str, tuple[str, ...]] = {}
    for measure in measures:
        if measure.is_text:
            text[measure.name] = relstring(hits, measure.params[0])
            continue
        values = trec_values(hits, measure, level)
        per_query[measure.name] = values
        summary[measure.name] = summarise(measure, values)
    return TrecResult(hits.query_ids, measures, per_query, summary, hits.runid, text)


def _score_pieces(
    qrels: Columns,
    measures: tuple[TrecMeasure, ...],
    level: int,
    max_docs: int | None,
) -> Callable[[Iterable[Columns]], TrecResult | None]:
    """A scorer of pieces of whole queries (see :func:`_scored`) against these qrels."""
    return partial(_scored, JudgmentsByQuery(qrels), measures, level, max_docs)


def _scored(
    index: JudgmentsByQuery,
    measures: tuple[TrecMeasure, ...],
    level: int,
    max_docs: int | None,
    pieces: Iterable[Columns],
) -> TrecResult | None:
    """Score each piece of whole queries as it comes, then put the queries in order.

    Every measure's per-query value depends on that query alone, so a piece's values
    are final; only the summary needs them all. ``None`` when no query has both
    results and judgments (the whole-file path words that error).
    """
    positions: list[np.ndarray] = []
    values: dict[str, list[FloatArray]] = {m.name: [] for m in measures if not m.is_text}
    texts: dict[str, list[str]] = {m.name: [] for m in measures if m.is_text}
    runid = ""
    for piece in pieces:
        runid = piece.runid
        judgments, at = index.for_run(piece)
        if at.size == 0:  # nothing to score, but trec_eval refuses a repeated document anywhere
            reject_duplicate_results(piece)
            continue
        hits = judge_run(judgments, piece, complete=False, max_docs=max_docs)
        positions.append(at)
        for measure in measures:
            if measure.is_text:
                texts[measure.name].extend(relstring(hits, measure.params[0]))
            else:
                values[measure.name].append(trec_values(hits, measure, level))
    if not positions:
        return None
    every = np.concatenate(positions)
    order = np.argsort(every, kind="stable")
    query_ids = index.query_id(every[order])
    per_query = {name: np.concatenate(parts)[order] for name, parts in values.items()}
    summary = {m.name: summarise(m, per_query[m.name]) for m in measures if not m.is_text}
    text = {name: tuple(map(parts.__getitem__, order.tolist())) for name, parts in texts.items()}
    return TrecResult(query_ids, measures, per_query, summary, runid, text)


def format_trec(result: TrecResult, *, per_query: bool) -> str:
    """trec_eval's text output: ``name<TAB>qid|all<TAB>value`` lines."""
    lines: list[str] = []
    if per_query:
        shown = [m for m in result.measures if m.family not in SUMMARY_ONLY]
        columns = [_column(result, m) for m in shown]
        for row, qid in enumerate(result.query_ids):
            for measure, values in zip(shown, columns, strict=True):
                lines.append(_line(measure, qid, values[row]))
    for measure in result.measures:
        if measure.family == "runid":
            lines.append(f"{'runid':<22}\tall\t{result.runid}\n")
        elif measure.family not in PER_QUERY_ONLY:
            lines.append(_line(measure, "all", result.summary[measure.name]))
    return "".join(lines)


def _column(result: TrecResult, measure: TrecMeasure) -> list[float] | tuple[str, ...]:
    if measure.is_text:
        return result.text[measure.name]
    values: list[float] = result.per_query[measure.name].tolist()
    return values


def _line(measure: TrecMeasure, qid: str, value: float | str) -> str:
    if isinstance(value, str):
        return f"{measure.name:<22}\t{qid}\t'{value}'\n"
    if measure.is_count:
        return f"{measure.name:<22}\t{qid}\t{int(value)}\n"
    if math.isnan(value):
        # C's printf on x86-64 glibc prints the NaN of 0.0 / 0.0 as "-nan".
        return f"{measure.name:<22}\t{qid}\t{'-nan':>6}\n"
    return f"{measure.name:<22}\t{qid}\t{value:6.4f}\n"


def as_json(result: TrecResult, *, per_query: bool) -> dict[str, object]:
    """Unrounded values: ``{"all": {name: value}, "per_query": {qid: {name: value}}}``."""

    def plain(measure: TrecMeasure, value: float | str) -> float | int | str | None:
        if measure.family == "runid":
            return result.runid
        if isinstance(value, str):
            return value
        if math.isnan(value):
            return None  # JSON has no NaN
        return int(value) if measure.is_count else value

    document: dict[str, object] = {
        "all": {
            m.name: plain(m, result.summary[m.name])
            for m in result.measures
            if m.family not in PER_QUERY_ONLY
        }
    }
    if per_query:
        shown = [m for m in result.measures if m.family not in SUMMARY_ONLY]
        table = {m.name: _column(result, m) for m in shown}
        document["per_query"] = {
            qid: {m.name: plain(m, table[m.name][row]) for m in shown}
            for row, qid in enumerate(result.query_ids)
        }
    return document
