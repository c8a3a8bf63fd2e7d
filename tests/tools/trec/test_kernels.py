"""Per-query values of trec_eval's measures (tools/trec/kernels.py), against pytrec_eval
(trec_eval's own C code), and the ``all`` line and relstring as trec_eval prints them."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
import pytrec_eval

from retrieval_eval.tools.trec.hits import TrecHits
from retrieval_eval.tools.trec.join import judge_run
from retrieval_eval.tools.trec.kernels import relstring, summarise, trec_values
from retrieval_eval.tools.trec.measures import TrecMeasure, parse_trec_measures
from retrieval_eval.tools.trec.text.files import read_qrels, read_run

QRELS = {
    "q1": {"a": 3, "b": 0, "c": 1, "d": 2, "e": 1, "f": -1},
    "q2": {"x": 1, "y": 2, "u": 0},
    "q3": {"m": 1, "k": 12},
}
RUN = {
    "q1": {"a": 0.9, "b": 0.8, "c": 0.7, "z": 0.6, "d": 0.5, "f": 0.4},
    "q2": {"w": 0.9, "y": 0.5, "v": 0.4, "u": 0.3},
    "q3": {"n": 1.0, "k": 0.5},
}
# pytrec_eval's key for each measure name trec_eval prints. iprec_at_recall and 11pt_avg
# changed in trec_eval 10.0, after pytrec_eval's copy: test_report_parity.py checks them
# against 10.0's definition.
MEASURES = {
    "P.5": "P_5",
    "map": "map",
    "recip_rank": "recip_rank",
    "Rprec": "Rprec",
    "bpref": "bpref",
    "infAP": "infAP",
    "recall.3": "recall_3",
    "ndcg_cut.3": "ndcg_cut_3",
    "set_F": "set_F",
    "binG": "binG",
    "relative_P.5": "relative_P_5",
    "Rprec_mult.2.0": "Rprec_mult_2.00",
    "utility": "utility",
    "num_nonrel_judged_ret": "num_nonrel_judged_ret",
    "num_rel_ret": "num_rel_ret",
}


def hits(folder: Path) -> TrecHits:
    (folder / "qrels").write_text(
        "".join(f"{q} 0 {d} {g}\n" for q, docs in QRELS.items() for d, g in docs.items())
    )
    (folder / "run").write_text(
        "".join(f"{q} Q0 {d} 1 {s} t\n" for q, docs in RUN.items() for d, s in docs.items())
    )
    return judge_run(read_qrels(folder / "qrels"), read_run(folder / "run"), complete=False)


@pytest.mark.parametrize("argument", list(MEASURES))
@pytest.mark.parametrize("level", [1, 2])
def test_each_measure_is_trec_evals(tmp_path: Path, argument: str, level: int) -> None:
    [measure] = parse_trec_measures([argument])
    judged = hits(tmp_path)
    ours = trec_values(judged, measure, level).tolist()
    key = MEASURES[argument]
    evaluator = pytrec_eval.RelevanceEvaluator(QRELS, {argument}, relevance_level=level)
    theirs = evaluator.evaluate(RUN)
    assert ours == pytest.approx([theirs[q][key] for q in judged.query_ids], abs=1e-12)


def test_the_all_line_sums_counts_and_takes_the_geometric_mean_of_gm_map() -> None:
    values = np.array([0.5, 0.25, 1.0])
    assert summarise(TrecMeasure("map"), values) == pytest.approx(1.75 / 3)
    assert summarise(TrecMeasure("num_rel_ret"), values) == 1.75
    # gm_map's per-query values are already logs (of max(value, 1e-5)): the mean is exp'd.
    logs = np.log(values)
    assert summarise(TrecMeasure("gm_map"), logs) == pytest.approx(math.exp(logs.mean()))
    assert summarise(TrecMeasure("map"), np.zeros(0)) == 0.0


def test_relstring_shows_each_ranks_grade(tmp_path: Path) -> None:
    """A grade as a digit ('>' above 9), '.' for a negative grade, '-' for a document not
    in the qrels; the top 10 unless told otherwise."""
    judged = hits(tmp_path)
    assert list(judged.query_ids) == ["q1", "q2", "q3"]
    assert relstring(judged) == ("301-2.", "-2-0", "->")
    assert relstring(judged, 3.9) == ("301", "-2-", "->")  # truncated as C casts
    assert relstring(judged, 0) == ("", "", "")
