"""Every measure, per query and overall, against pytrec_eval (trec_eval's own C code).

1,000 seeded random qrels/run pairs through each entry point: the ``trec``
file path (must equal trec_eval exactly, query set included) and the
``score_queries`` API (same values; its query set is documented to differ).
"""

from __future__ import annotations

from pathlib import Path

import pytest
import pytrec_eval

from retrieval_eval.score.query_scores import score_queries
from retrieval_eval.tools.trec.report import score_trec_run
from tests.tools.trec.random_cases import random_case, write_case

CASES = 1000
TOLERANCE = 1e-9
TREC_MEASURES = (
    "num_q",
    "num_ret",
    "num_rel",
    "num_rel_ret",
    "map",
    "Rprec",
    "recip_rank",
    "P.1,3,5,10,20",
    "recall.1,5,10,30",
    "ndcg_cut.1,3,5,10,20",
    "map_cut.1,5,10,30",
)
PYTREC_MEASURES = {m for m in TREC_MEASURES if m != "num_q"}


def _pytrec(qrels: dict[str, dict[str, int]], run: dict[str, dict[str, float]], measures: set[str]):  # type: ignore[no-untyped-def]
    return pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(run)


@pytest.mark.slow
def test_trec_files_match_pytrec_eval_on_random_pairs(tmp_path: Path) -> None:
    checked_values = 0
    for seed in range(CASES):
        case = random_case(seed)
        qrels_path, run_path = write_case(case, tmp_path, seed)
        expected = _pytrec(case.qrels, case.run, PYTREC_MEASURES)
        if not expected:
            continue  # no query in both files: trec_eval refuses too (tested elsewhere)
        result = score_trec_run(qrels_path, run_path, TREC_MEASURES)
        assert list(result.query_ids) == sorted(expected), f"seed {seed}: query set"
        for name, values in result.per_query.items():
            for qid, value in zip(result.query_ids, values.tolist(), strict=True):
                want = 1.0 if name == "num_q" else expected[qid][name]
                assert abs(value - want) <= TOLERANCE, (
                    f"seed {seed}: {name} for {qid}: {value} != {want}"
                )
                checked_values += 1
            per_query = [1.0 if name == "num_q" else expected[q][name] for q in result.query_ids]
            counted = name.startswith("num_")
            want_all = sum(per_query) if counted else sum(per_query) / len(per_query)
            assert abs(result.summary[name] - want_all) <= TOLERANCE, f"seed {seed}: {name} all"
    assert checked_values > 50_000


def test_complete_flag_averages_over_every_qrels_query(tmp_path: Path) -> None:
    for seed in range(0, CASES, 5):
        case = random_case(seed)
        qrels_path, run_path = write_case(case, tmp_path, seed)
        in_both = _pytrec(case.qrels, case.run, PYTREC_MEASURES)
        if not in_both or not case.qrels:
            continue
        # A query absent from the run is scored against an empty ranking: every measure 0.
        empty_run = {qid: case.run.get(qid, {}) for qid in case.qrels}
        expected = _pytrec(case.qrels, empty_run, PYTREC_MEASURES)
        result = score_trec_run(
            qrels_path, run_path, ("map", "ndcg_cut.10", "num_rel", "num_ret"), complete=True
        )
        assert list(result.query_ids) == sorted(case.qrels)
        for name in ("map", "ndcg_cut_10", "num_rel", "num_ret"):
            values = [expected[qid][name] for qid in result.query_ids]
            want = sum(values) if name.startswith("num_") else sum(values) / len(values)
            assert abs(result.summary[name] - want) <= TOLERANCE, f"seed {seed}: {name}"


OUR_MEASURES = (
    "mrr@1",
    "mrr@3",
    "mrr@10",
    "mrr",
    "ndcg@1",
    "ndcg@5",
    "ndcg@10",
    "ndcg@30",
    "p@1",
    "p@5",
    "p@20",
    "recall@1",
    "recall@5",
    "recall@30",
    "map",
    "map@5",
    "map@30",
    "hit_rate@1",
    "hit_rate@5",
    "r_precision",
)
# our name -> (pytrec_eval measure, its result key, cut the ranking to this depth first)
REFERENCE = {
    "mrr@1": ("recip_rank", "recip_rank", 1),
    "mrr@3": ("recip_rank", "recip_rank", 3),
    "mrr@10": ("recip_rank", "recip_rank", 10),
    "mrr": ("recip_rank", "recip_rank", None),
    "ndcg@1": ("ndcg_cut.1", "ndcg_cut_1", None),
    "ndcg@5": ("ndcg_cut.5", "ndcg_cut_5", None),
    "ndcg@10": ("ndcg_cut.10", "ndcg_cut_10", None),
    "ndcg@30": ("ndcg_cut.30", "ndcg_cut_30", None),
    "p@1": ("P.1", "P_1", None),
    "p@5": ("P.5", "P_5", None),
    "p@20": ("P.20", "P_20", None),
    "recall@1": ("recall.1", "recall_1", None),
    "recall@5": ("recall.5", "recall_5", None),
    "recall@30": ("recall.30", "recall_30", None),
    "map": ("map", "map", None),
    "map@5": ("map_cut.5", "map_cut_5", None),
    "map@30": ("map_cut.30", "map_cut_30", None),
    "hit_rate@1": ("success.1", "success_1", None),
    "hit_rate@5": ("success.5", "success_5", None),
    "r_precision": ("Rprec", "Rprec", None),
}


def test_evaluate_matches_pytrec_eval_on_random_pairs() -> None:
    checked_values = 0
    for seed in range(CASES):
        case = random_case(seed)
        # Rankings are the run in trec_eval's order; pytrec_eval gets scores that keep it.
        rankings = {
            qid: sorted(
                docs, key=lambda doc, docs=docs: (-docs[doc], [-b for b in doc.encode()], len(doc))
            )
            for qid, docs in case.run.items()
        }
        ours = score_queries(case.qrels, rankings, OUR_MEASURES)
        scored = {
            qid: {doc: float(len(r) - i) for i, doc in enumerate(r)} for qid, r in rankings.items()
        }
        with_relevant = {
            qid for qid, judged in case.qrels.items() if any(g >= 1 for g in judged.values())
        }
        by_cut: dict[int | None, dict[str, dict[str, dict[str, float]]]] = {}
        for cut in {cut for _, _, cut in REFERENCE.values()}:
            run = {
                qid: {doc: s for doc, s in docs.items() if cut is None or s > len(docs) - cut}
                for qid, docs in scored.items()
                if qid in with_relevant
            }
            wanted = {measure for measure, _, c in REFERENCE.values() if c == cut}
            by_cut[cut] = _pytrec(case.qrels, run, wanted)
        for name in OUR_MEASURES:
            assert set(ours[name]) == with_relevant, f"seed {seed}: {name} query set"
            _, key, cut = REFERENCE[name]
            expected = by_cut[cut]
            for qid in with_relevant:
                want = expected[qid][key] if qid in expected else 0.0  # missing ranking scores 0
                assert abs(ours[name][qid] - want) <= TOLERANCE, f"seed {seed}: {name} {qid}"
                checked_values += 1
    assert checked_values > 20_000


@pytest.mark.parametrize("seed", [3, 17])
def test_line_order_does_not_change_numbers(tmp_path: Path, seed: int) -> None:
    """trec_eval ignores line order and the rank column; so do we."""
    case = random_case(seed)
    results = []
    for order in ("trec", "shuffled", "interleaved"):
        folder = tmp_path / order
        folder.mkdir()
        qrels_path, run_path = write_case(
            type(case)(case.qrels, case.run, case.score_text, order), folder, seed
        )
        results.append(
            score_trec_run(qrels_path, run_path, ("map", "ndcg_cut.5", "recip_rank")).summary
        )
    assert results[0] == results[1] == results[2]
