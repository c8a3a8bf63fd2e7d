"""Unlabelled hits, through `retrieval-eval run`: a run-file retriever whose hits are
written by hand, so every count below is worked out from the lines of the run file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.compare.conftest import Project
from tests.support.action import run_cli

CONFIG = """\
min_fixtures = 5
min_human = 3

[dataset_retrievers]
"keyword.jsonl" = "run-file"

[retrievers.run-file]
path = "run.trec"

[thresholds]
"p@5" = false
"""

EXPECTED = {
    "kw-01": ["recipes/lemon-tart"],
    "kw-02": ["recipes/shakshuka"],
    "kw-03": ["travel/lisbon"],
    "kw-04": ["travel/kyoto"],
    "kw-05": ["software/rate-limit"],
    "kw-06": ["software/sqlite-wal"],
    "kw-07": ["software/deploy"],
    "kw-08": ["journal/marathon"],
    "kw-09": ["books/atomic-habits"],
    "kw-10": ["books/deep-work"],
    "kw-11": ["recipes/lemon-tart", "recipes/lemon-chicken"],
}
# The baseline's run: each query's expected documents first; kw-01..kw-05 also return
# books/deep-work, which nobody labelled for them.
BASELINE_RUN = {
    **{qid: [*docs, "books/deep-work"] for qid, docs in EXPECTED.items() if qid <= "kw-05"},
    **{qid: docs for qid, docs in EXPECTED.items() if qid > "kw-05"},
}
# The pull request's run: kw-01 and kw-02 now rank an unlabelled document first (a new one:
# travel/kyoto and travel/lisbon were in neither's top k), and kw-06..kw-10 return two
# more unlabelled documents after their expected one.
PR_RUN = {
    **BASELINE_RUN,
    "kw-01": ["travel/kyoto", "recipes/lemon-tart", "books/deep-work"],
    "kw-02": ["travel/lisbon", "recipes/shakshuka", "books/deep-work"],
    **{
        qid: [*EXPECTED[qid], "travel/iceland", "recipes/shakshuka"]
        for qid in ("kw-06", "kw-07", "kw-08", "kw-09", "kw-10")
    },
}


def write_run(root: Path, ranking: dict[str, list[str]]) -> None:
    lines = [
        f"{qid} Q0 {doc} {rank} {100 - rank} hand"
        for qid, docs in ranking.items()
        for rank, doc in enumerate(docs, start=1)
    ]
    (root / "run.trec").write_text("\n".join(lines) + "\n", encoding="utf-8")


@pytest.fixture
def labelled_project(tmp_path: Path) -> Project:
    project = Project(tmp_path)
    (tmp_path / "retrieval-eval.toml").write_text(CONFIG, encoding="utf-8")
    return project


def report_of(project: Project) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((project.report_dir / "report.json").read_text())
    return data


def test_unlabelled_counts_and_the_labelled_share_at_k(labelled_project: Project) -> None:
    root = labelled_project.root
    write_run(root, BASELINE_RUN)
    first = run_cli(root, "run")
    assert first.returncode == 0, first.log

    dataset = report_of(labelled_project)["datasets"][0]
    counts = {q["query_id"]: q["unlabelled_at_k"] for q in dataset["queries"]}
    # kw-01..05 returned one unlabelled document each; the rest only labelled ones; the
    # expect_empty fixture has no golden set to count against.
    assert counts == {
        **{f"kw-0{i}": 1 for i in range(1, 6)},
        **{f"kw-{i:02d}": 0 for i in range(6, 12)},
        "kw-12": None,
    }
    assert dataset["queries"][0]["unlabelled_ids"] == ["books/deep-work"]
    # 17 results at k (five queries with 2, five with 1, kw-11 with 2), 5 of them unlabelled.
    assert dataset["labels"]["retrieved"] == 17
    assert dataset["labels"]["labelled"] == 12
    assert dataset["labels"]["share"] == pytest.approx(12 / 17)
    entry = labelled_project.baseline_data()["datasets"]["keyword.jsonl"]
    assert entry["labelled_share"] == pytest.approx(12 / 17)
    assert entry["queries"]["kw-01"]["retrieved"] == ["recipes/lemon-tart", "books/deep-work"]

    write_run(root, PR_RUN)
    second = run_cli(root, "run")
    assert second.returncode == 1, second.log  # kw-01 and kw-02 lost their first rank

    report = report_of(labelled_project)
    dataset = report["datasets"][0]
    counts = {q["query_id"]: q["unlabelled_at_k"] for q in dataset["queries"]}
    assert counts["kw-01"] == counts["kw-02"] == 2 and counts["kw-06"] == 2
    # 3+3 (kw-01, kw-02) + 2*3 (kw-03..05) + 3*5 (kw-06..10) + 2 (kw-11) = 29 results,
    # 2+2+3+10 = 17 of them unlabelled: 12/29 labelled, down from 12/17 (29 points).
    assert (dataset["labels"]["retrieved"], dataset["labels"]["labelled"]) == (29, 12)
    assert dataset["labels"]["share"] == pytest.approx(12 / 29)
    assert dataset["labels"]["baseline_share"] == pytest.approx(12 / 17)
    assert dataset["labels"]["dropped"] is True
    moves = {m["query_id"]: m for m in dataset["comparison"]["regressed_most"]}
    assert set(moves) == {"kw-01", "kw-02"}
    assert moves["kw-01"]["top_after_unlabelled"] is True
    # Only the document that is new in the top k is a hole; books/deep-work was there before.
    assert [(h["doc_id"], h["rank"]) for h in moves["kw-01"]["holes"]] == [("travel/kyoto", 1)]
    assert [(h["doc_id"], h["rank"]) for h in moves["kw-02"]["holes"]] == [("travel/lisbon", 1)]

    markdown = (labelled_project.report_dir / "report.md").read_text(encoding="utf-8")
    assert "| travel/kyoto · possibly a missing label |" in markdown
    assert "· ⚠️ labelled at k: 41% (was 71%)" in markdown
    assert "Unlabelled documents new in the top k of regressed queries (2)" in markdown
    assert "retrieval-eval review --holes report.json" in markdown


def test_the_share_is_informational_and_an_older_baseline_still_loads(
    labelled_project: Project,
) -> None:
    root = labelled_project.root
    write_run(root, BASELINE_RUN)
    assert run_cli(root, "run").returncode == 0
    write_run(root, PR_RUN)
    with_share = run_cli(root, "run")
    decided = report_of(labelled_project)

    # The same baseline as an older version wrote it: no share, no top k per query.
    data = labelled_project.baseline_data()
    entry = data["datasets"]["keyword.jsonl"]
    del entry["labelled_share"]
    for query in entry["queries"].values():
        del query["retrieved"]
    labelled_project.write_baseline_data(data)
    without = run_cli(root, "run")
    report = report_of(labelled_project)

    assert with_share.returncode == without.returncode == 1
    for key in ("verdict", "headline", "status_description"):
        assert report[key] == decided[key]
    dataset, before = report["datasets"][0], decided["datasets"][0]
    quality = [
        r for r in before["rows"] if r["metric"] not in ("latency_p95_ms", "cost_per_query_usd")
    ]
    assert [r for r in dataset["rows"] if r["metric"] in {q["metric"] for q in quality}] == quality
    assert dataset["query_checks"] == before["query_checks"]
    assert dataset["labels"]["baseline_share"] is None and dataset["labels"]["dropped"] is False
    # Without the baseline's top k, a hole is an unlabelled document ranked above the first
    # relevant one: here the same documents.
    moves = {m["query_id"]: m for m in dataset["comparison"]["regressed_most"]}
    assert [h["doc_id"] for h in moves["kw-01"]["holes"]] == ["travel/kyoto"]
    markdown = (labelled_project.report_dir / "report.md").read_text(encoding="utf-8")
    assert "labelled at k:" not in markdown


def test_a_first_document_already_in_the_baselines_top_k_is_no_missing_label() -> None:
    """ "Possibly a missing label" only for a document new in the top k and unjudged: one
    the baseline already ranked did not make the query regress."""
    from retrieval_eval.compare.labels import _with_holes
    from retrieval_eval.results import QueryMove, QueryResult

    now = QueryResult(
        query_id="q1",
        query="eggs",
        line=1,
        ground_truth_source="human-annotated",
        retrieved=("unjudged", "answer"),
        first_relevant_rank=2,
        metrics={"mrr@10": 0.5},
        latency_ms=1.0,
        cost_usd=0.0,
        unlabelled_at_k=1,
        unlabelled_ids=("unjudged",),
    )
    move = QueryMove(
        query_id="q1", query="eggs", metric="mrr@10", baseline=1.0, current=0.5,
        rank_before=1, rank_after=2, top_after="unjudged",
    )  # fmt: skip
    was_there = _with_holes(move, now, before=("answer", "unjudged"))
    assert not was_there.top_after_unlabelled and was_there.holes == ()
    new = _with_holes(move, now, before=("answer", "other"))
    assert new.top_after_unlabelled and [h.doc_id for h in new.holes] == ["unjudged"]
