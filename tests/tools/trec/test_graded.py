"""trec_eval's gain-based measures (tools/trec/graded.py): G, ndcg_rel and Rndcg against
pytrec_eval (trec_eval's own C code), rbp and rbp_resid (trec_eval 10, which pytrec_eval
predates) against their definitions worked by hand."""

from __future__ import annotations

from pathlib import Path

import pytest
import pytrec_eval

from retrieval_eval.tools.trec.graded import gain_measure
from retrieval_eval.tools.trec.hits import TrecHits
from retrieval_eval.tools.trec.join import judge_run
from retrieval_eval.tools.trec.text.files import read_qrels, read_run

QRELS = {
    "q1": {"a": 3, "b": 0, "c": 1, "d": 2, "e": 1},
    "q2": {"x": 1, "y": 2},
    "q3": {"m": 1},
}
RUN = {
    "q1": {"a": 0.9, "b": 0.8, "c": 0.7, "z": 0.6, "d": 0.5},
    "q2": {"w": 0.9, "y": 0.5, "v": 0.4},
    "q3": {"n": 1.0},
}


def hits(folder: Path) -> TrecHits:
    (folder / "qrels").write_text(
        "".join(f"{q} 0 {d} {g}\n" for q, docs in QRELS.items() for d, g in docs.items())
    )
    (folder / "run").write_text(
        "".join(f"{q} Q0 {d} 1 {s} t\n" for q, docs in RUN.items() for d, s in docs.items())
    )
    return judge_run(read_qrels(folder / "qrels"), read_run(folder / "run"), complete=False)


@pytest.mark.parametrize("family", ["G", "ndcg_rel", "Rndcg"])
@pytest.mark.parametrize("level", [1, 2])
def test_the_gain_measures_are_trec_evals(tmp_path: Path, family: str, level: int) -> None:
    judged = hits(tmp_path)
    ours = gain_measure(judged, family, level).tolist()
    evaluator = pytrec_eval.RelevanceEvaluator(QRELS, {family}, relevance_level=level)
    theirs = evaluator.evaluate(RUN)
    assert ours == pytest.approx([theirs[q][family] for q in judged.query_ids], abs=1e-12)


def test_rbp_by_hand(tmp_path: Path) -> None:
    """(1 - p) * sum of gain * p^(rank - 1), the gains divided by the query's highest grade
    when that is above 1; p = 0.9."""
    q1 = 0.1 * (3 / 3 + 0 + (1 / 3) * 0.9**2 + (2 / 3) * 0.9**4)
    q2 = 0.1 * ((2 / 2) * 0.9)
    values = gain_measure(hits(tmp_path), "rbp", 1).tolist()
    assert values == pytest.approx([q1, q2, 0.0], abs=1e-15)
    assert gain_measure(hits(tmp_path), "rbp", 1, persistence=0.5)[1] == pytest.approx(0.5 * 0.5)


def test_rbp_resid_by_hand(tmp_path: Path) -> None:
    """p^num_ret + (1 - p) * the sum of p^(rank - 1) over the ranks without a judgment:
    the most rbp could still gain were the unjudged documents relevant."""
    q1 = 0.9**5 + 0.1 * 0.9**3  # z, at rank 4, is the only unjudged one
    q2 = 0.9**3 + 0.1 * (1 + 0.9**2)  # w and v
    q3 = 0.9**1 + 0.1 * 1
    values = gain_measure(hits(tmp_path), "rbp_resid", 1).tolist()
    assert values == pytest.approx([q1, q2, q3], abs=1e-15)


def test_an_unknown_family_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="no gain kernel for ndcg"):
        gain_measure(hits(tmp_path), "ndcg", 1)
