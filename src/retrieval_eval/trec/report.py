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
from dataclasses import dataclass
from pathlib import Path

from retrieval_eval.errors import ConfigError, InputError
from retrieval_eval.load.trec_text.files import read_qrels, read_run
from retrieval_eval.score.ranked import FloatArray
from retrieval_eval.trec.join import judge_run
from retrieval_eval.trec.kernels import relstring, summarise, trec_values
from retrieval_eval.trec.measures import (
    PER_QUERY_ONLY,
    SUMMARY_ONLY,
    TrecMeasure,
    parse_trec_measures,
)


@dataclass(frozen=True)
class TrecResult:
    """Per-query values (aligned with ``query_ids``) and the summary of each measure."""

    query_ids: tuple[str, ...]
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
) -> TrecResult:
    """``level`` is trec_eval's ``-l`` (lowest relevant grade), ``max_docs`` its ``-M``."""
    if level < 0:
        raise ConfigError(f"relevance level {level} is negative; use 0 or more")
    if max_docs is not None and max_docs < 1:
        raise ConfigError(f"max documents per query {max_docs} must be 1 or more")
    measures = tuple(parse_trec_measures(measure_names))
    qrels = read_qrels(qrels_path)
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
