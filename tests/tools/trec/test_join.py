"""Joining a run with its qrels the way trec_eval does (tools/trec/join.py).

trec_eval ranks a query's results by score, highest first, ties by document id in
reverse ``strcmp`` order, and ignores the rank column; it evaluates the qrels' queries
the run has (``-c``: every qrels query), in ``strcmp`` order of their ids; ``-M`` cuts
each ranking; a document listed twice for a query, in the run or in the qrels, is an error.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from retrieval_eval.errors import InputError
from retrieval_eval.tools.trec.join import judge_run, reject_duplicate_results
from retrieval_eval.tools.trec.text.files import read_qrels, read_run


def files(folder: Path, qrels: str, run: str) -> tuple[Path, Path]:
    (folder / "qrels").write_text(qrels, encoding="utf-8")
    (folder / "run").write_text(run, encoding="utf-8")
    return folder / "qrels", folder / "run"


def test_ties_are_broken_by_document_id_descending_and_the_rank_column_is_ignored(
    tmp_path: Path,
) -> None:
    qrels, run = files(
        tmp_path,
        "q1 0 d1 1\nq1 0 d2 2\nq1 0 d3 3\nq1 0 d10 0\n",
        # The rank column says d1 first; trec_eval reads only the scores.
        "q1 Q0 d1 1 1.0 t\nq1 Q0 d2 2 1.0 t\nq1 Q0 d3 3 2.0 t\nq1 Q0 d10 4 1.0 t\n",
    )
    hits = judge_run(read_qrels(qrels), read_run(run), complete=False)
    # d3 (2.0), then the ties at 1.0 by id descending: "d2" > "d10" > "d1".
    assert hits.judged_rank.tolist() == [1, 2, 3, 4]
    assert hits.judged_grade.tolist() == [3, 2, 0, 1]
    assert hits.num_ret.tolist() == [4]
    assert hits.runid == "t"


def test_the_queries_are_the_qrels_ones_the_run_has_in_strcmp_order(tmp_path: Path) -> None:
    qrels, run = files(
        tmp_path,
        "q9 0 a 1\nq2 0 a 1\nq10 0 b 1\n",
        "q2 Q0 a 1 1 t\nq5 Q0 a 1 1 t\nq10 Q0 a 1 1 t\nq10 Q0 b 2 0.5 t\n",
    )
    hits = judge_run(read_qrels(qrels), read_run(run), complete=False)
    assert list(hits.query_ids) == ["q10", "q2"]  # q5 has no judgments, q9 no results
    assert hits.num_ret.tolist() == [2, 1]
    assert hits.judged_query.tolist() == [0, 1]  # q10's b at rank 2, q2's a at rank 1
    assert hits.judged_rank.tolist() == [2, 1]
    complete = judge_run(read_qrels(qrels), read_run(run), complete=True)
    assert list(complete.query_ids) == ["q10", "q2", "q9"]  # -c: q9 counts, with nothing
    assert complete.num_ret.tolist() == [2, 1, 0]


def test_max_docs_cuts_each_ranking(tmp_path: Path) -> None:
    qrels, run = files(
        tmp_path,
        "q 0 a 1\nq 0 c 1\n",
        "q Q0 a 1 3 t\nq Q0 b 2 2 t\nq Q0 c 3 1 t\n",
    )
    hits = judge_run(read_qrels(qrels), read_run(run), complete=False, max_docs=2)
    assert hits.num_ret.tolist() == [2]
    assert hits.judged_rank.tolist() == [1]  # c, at rank 3, is past -M 2
    assert hits.qrels_grade.tolist() == [1, 1]  # both judgments still count as relevant


def test_unjudged_results_are_not_kept_and_negative_grades_are(tmp_path: Path) -> None:
    qrels, run = files(tmp_path, "q 0 a -1\nq 0 b 0\n", "q Q0 x 1 3 t\nq Q0 a 2 2 t\n")
    hits = judge_run(read_qrels(qrels), read_run(run), complete=False)
    assert hits.judged_rank.tolist() == [2]  # x is not in the qrels: only a rank is counted
    assert hits.judged_grade.tolist() == [-1]
    assert np.array_equal(hits.num_at_or_above(1), [0])


def test_a_document_twice_in_the_run_is_refused_at_its_second_line(tmp_path: Path) -> None:
    _, run = files(tmp_path, "q 0 a 1\n", "q Q0 a 1 3 t\nq Q0 b 2 2 t\nq Q0 a 3 1 t\n")
    with pytest.raises(InputError, match="'a' appears twice for query 'q'") as caught:
        reject_duplicate_results(read_run(run))
    assert caught.value.line == 3


def test_a_document_judged_twice_is_refused(tmp_path: Path) -> None:
    qrels, run = files(tmp_path, "q 0 a 1\nq 0 a 0\n", "q Q0 a 1 3 t\n")
    with pytest.raises(InputError, match="'a' is judged twice for query 'q'"):
        judge_run(read_qrels(qrels), read_run(run), complete=False)
