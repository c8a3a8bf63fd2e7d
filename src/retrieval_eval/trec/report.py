"""trec_eval's numbers and its three-column output, from TREC files.

Query set, averaging and printing follow trec_eval 9.x: queries present in both
files (every qrels query with ``complete``, trec_eval's ``-c``), including those
whose judgments are all non-relevant (they score 0); per-query lines in query-id
order; measures in trec_eval's table order; floats as ``%6.4f``, counts as
integers, names left-aligned in 22 columns. ``num_q`` (summary line only) counts the queries, the
other counts are summed, everything else is the mean over the queries.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from retrieval_eval.errors import InputError
from retrieval_eval.score.kernels import compute
from retrieval_eval.score.measures import (
    TREC_COUNT_KINDS,
    Measure,
    parse_trec_measures,
)
from retrieval_eval.score.ranked import FloatArray
from retrieval_eval.trec.files import read_qrels, read_run
from retrieval_eval.trec.join import rank_against_qrels

# Without -m: trec_eval's "official" set, less the measures we do not implement
# (runid, gm_map, bpref, iprec_at_recall).
DEFAULT_TREC_MEASURES: tuple[str, ...] = (
    "num_q",
    "num_ret",
    "num_rel",
    "num_rel_ret",
    "map",
    "Rprec",
    "recip_rank",
    "P",
)


@dataclass(frozen=True)
class TrecResult:
    """Per-query values (aligned with ``query_ids``) and the summary of each measure."""

    query_ids: tuple[str, ...]
    measures: tuple[Measure, ...]
    per_query: dict[str, FloatArray]  # trec name -> values
    summary: dict[str, float]  # trec name -> value


def trec_evaluate(
    qrels_path: Path, run_path: Path, measure_names: tuple[str, ...] = (), *, complete: bool = False
) -> TrecResult:
    measures = tuple(parse_trec_measures(list(measure_names or DEFAULT_TREC_MEASURES)))
    qrels = read_qrels(qrels_path)
    run = read_run(run_path)
    hits = rank_against_qrels(qrels, run, complete=complete)
    if hits.num_queries == 0:
        raise InputError(
            "no query has both results in the run and judgments in the qrels; check the query ids",
            file=run_path,
        )
    per_query: dict[str, FloatArray] = {}
    summary: dict[str, float] = {}
    for measure in measures:
        values = compute(hits, measure)
        per_query[measure.trec_name] = values
        summary[measure.trec_name] = _summarise(measure, values)
    return TrecResult(hits.query_ids, measures, per_query, summary)


def _summarise(measure: Measure, values: FloatArray) -> float:
    if measure.kind in TREC_COUNT_KINDS:
        return float(values.sum())
    return float(values.mean())


def format_trec(result: TrecResult, *, per_query: bool) -> str:
    """trec_eval's text output: ``name<TAB>qid|all<TAB>value`` lines."""
    lines: list[str] = []
    if per_query:
        # trec_eval prints num_q only in the summary.
        shown = [m for m in result.measures if m.kind != "num_q"]
        columns = [result.per_query[m.trec_name].tolist() for m in shown]
        for row, qid in enumerate(result.query_ids):
            for measure, values in zip(shown, columns, strict=True):
                lines.append(_line(measure, qid, values[row]))
    for measure in result.measures:
        lines.append(_line(measure, "all", result.summary[measure.trec_name]))
    return "".join(lines)


def _line(measure: Measure, qid: str, value: float) -> str:
    if measure.kind in TREC_COUNT_KINDS:
        return f"{measure.trec_name:<22}\t{qid}\t{int(value)}\n"
    return f"{measure.trec_name:<22}\t{qid}\t{value:6.4f}\n"


def as_json(result: TrecResult, *, per_query: bool) -> dict[str, object]:
    """Unrounded values: ``{"all": {name: value}, "per_query": {qid: {name: value}}}``."""

    def plain(measure: Measure, value: float) -> float | int:
        return int(value) if measure.kind in TREC_COUNT_KINDS else value

    document: dict[str, object] = {
        "all": {m.trec_name: plain(m, result.summary[m.trec_name]) for m in result.measures}
    }
    if per_query:
        shown = [m for m in result.measures if m.kind != "num_q"]
        table = {m.trec_name: np.asarray(result.per_query[m.trec_name]).tolist() for m in shown}
        document["per_query"] = {
            qid: {m.trec_name: plain(m, table[m.trec_name][row]) for m in shown}
            for row, qid in enumerate(result.query_ids)
        }
    return document
