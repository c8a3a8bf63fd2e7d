"""Challengers through `retrieval-eval action`: evaluated on the pull request's fixtures after
the gated retriever, shown in the comment and report.json, and never part of the verdict,
the commit status, the baseline or the history.

The gated retriever is a command that finds nothing (MRR@10 0), so a BM25 challenger beats
it on every query: the comment must say so near the top, and the gate must not care.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import pytest

from tests.action.git_repo import git
from tests.action.project import CONFIG, FIXTURES, fixture_lines
from tests.security.harness import Repo, Run

pytestmark = pytest.mark.slow

FINDS_NOTHING = """\
import json, sys
for line in sys.stdin:
    request = json.loads(line)
    print(json.dumps({"hits": []} if request.get("op") == "search" else {"ok": True}), flush=True)
"""
# Eight queries, so that winning every one is significant after Holm's correction for two
# challengers (exact sign-flip p = 2/256, times 2).
MORE_FIXTURES = [
    *FIXTURES,
    ("k-007", "Cal Newport on focus without distraction", "books/deep-work"),
    ("k-008", "career change on a long walk", "journal/2024-03-01"),
]
GATED = (
    CONFIG
    + '\n[dataset_retrievers]\n"keyword.jsonl" = "custom"\n\n[retrievers.custom]\n'
    + f'command = [{json.dumps(sys.executable)}, "finds_nothing.py"]\n'
)
CHALLENGERS = """
[challengers.bm25-stemmed]
retriever = "bm25"

[challengers.bm25-stemmed.bm25]
stemming = true

[challengers.like-words]
retriever = "like"
datasets = ["keyword.jsonl"]
"""
UNREACHABLE = """
[challengers.staging]
retriever = "http"

[challengers.staging.http]
url = "http://127.0.0.1:9/search"
"""


def _main(repo: Repo) -> str:
    """Main gates the finds-nothing retriever; its baseline is committed."""
    repo.commit(
        {
            "finds_nothing.py": FINDS_NOTHING,
            "datasets/keyword.jsonl": fixture_lines(MORE_FIXTURES),
            "retrieval-eval.toml": GATED,
        },
        "gate the in-house search",
    )
    return repo.establish_baseline()


def _pull_request(repo: Repo, main: str, number: int, config: str) -> tuple[Run, bytes]:
    repo.branch(f"pr-{number}", main)
    head = repo.commit(
        {"README.md": f"# notes search {number}\n", "retrieval-eval.toml": config}, "a change"
    )
    run = repo.pull_request(number, main, head)
    baseline = (repo.path / "baseline.json").read_bytes()
    git(repo.path, "checkout", "-q", main)
    return run, baseline


def _report(repo: Repo) -> dict[str, Any]:
    path = repo.path / "retrieval-eval-report" / "report.json"
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def _gated_rows(report: dict[str, Any]) -> list[tuple[str, str, object]]:
    """Each gated row's metric, status and value (latency aside: no two runs share it)."""
    return [
        (row["metric"], row["status"], None if "latency" in row["metric"] else row["current"])
        for dataset in report["datasets"]
        for row in dataset["rows"]
    ]


def _status(run: Run) -> tuple[str, str]:
    last = run.statuses[-1]
    return last["state"], last["description"]


def test_two_challengers_are_reported_and_change_nothing_the_gate_decides(repo: Repo) -> None:
    main = _main(repo)
    committed = (repo.path / "baseline.json").read_bytes()

    plain, plain_baseline = _pull_request(repo, main, 1, GATED)
    plain_report = _report(repo)
    challenged, challenged_baseline = _pull_request(repo, main, 2, GATED + CHALLENGERS)
    report = _report(repo)

    # The gate's outcome is the same, to the byte.
    assert challenged.returncode == plain.returncode == 0, challenged.log
    assert challenged.outputs["verdict"] == plain.outputs["verdict"] == "passed"
    assert _status(challenged) == _status(plain)
    assert challenged_baseline == plain_baseline == committed
    assert _gated_rows(report) == _gated_rows(plain_report)
    assert plain_report["challengers"] == []
    assert report["verdict"] == plain_report["verdict"]
    assert report["headline"] == plain_report["headline"]

    # Both challengers are in report.json, against the gated retriever.
    (keyword,) = report["challengers"]
    assert keyword["dataset"] == "keyword.jsonl"
    assert keyword["reference"] == "custom"
    by_name = {c["name"]: c for c in keyword["challengers"]}
    assert list(by_name) == ["bm25-stemmed", "like-words"]
    stemmed = by_name["bm25-stemmed"]
    assert stemmed["retriever"] == "bm25"
    assert stemmed["retriever_config"]["tokenizer"]["stemmer"] == "snowball-english"
    assert (stemmed["wins"], stemmed["ties"], stemmed["losses"]) == (8, 0, 0)
    mrr = next(m for m in stemmed["metrics"] if m["metric"] == "mrr@10")
    assert (mrr["reference"], mrr["value"], mrr["delta"]) == (0.0, 1.0, 1.0)
    assert mrr["p_uncorrected"] == pytest.approx(2 / 256)  # every sign pattern, counted
    assert mrr["p_value"] == pytest.approx(2 * 2 / 256)  # Holm, two challengers
    assert "mrr@10" in stemmed["beats"]

    # The comment: one line near the top, after the verdict; the section with both rows.
    comment = challenged.comment
    verdict = f"**{report['headline']}**"
    assert verdict in comment, comment
    top = comment.split(verdict, 1)[1].split("| Dataset |", 1)[0]
    assert (
        "bm25-stemmed beats the gated custom on keyword.jsonl: MRR@10 +1.000, p = 0.016"
    ) in top, comment
    section = comment.split("### Challengers on keyword.jsonl", 1)[1]
    assert "| bm25-stemmed | bm25 | 1.000 | +1.000 ✅ | 0.016 |" in section
    assert "| like-words | like |" in section
    assert "| 8/0/0 |" in section
    assert "bm25-stemmed" not in plain.comment


def test_a_failing_challenger_is_a_warning_on_its_row_and_the_gate_decides_the_exit(
    repo: Repo,
) -> None:
    main = _main(repo)
    committed = (repo.path / "baseline.json").read_bytes()
    plain, _ = _pull_request(repo, main, 1, GATED)
    broken, baseline = _pull_request(repo, main, 2, GATED + CHALLENGERS + UNREACHABLE)
    assert baseline == committed

    assert broken.returncode == plain.returncode == 0, broken.log
    assert broken.outputs["verdict"] == plain.outputs["verdict"] == "passed"
    assert _status(broken) == _status(plain)
    assert "::warning::challenger staging on keyword.jsonl:" in broken.log
    (keyword,) = _report(repo)["challengers"]
    staging = next(c for c in keyword["challengers"] if c["name"] == "staging")
    assert staging["metrics"] == [] and staging["wins"] is None
    assert "cannot connect to 127.0.0.1:9" in staging["warning"]
    row = next(line for line in broken.comment.splitlines() if line.startswith("| staging |"))
    assert "⚠️" in row and "cannot connect to 127.0.0.1:9" in row
    # The other challengers still ran.
    assert "| bm25-stemmed | bm25 | 1.000 |" in broken.comment


def test_challengers_never_reach_the_history_or_the_baseline_on_a_push(repo: Repo) -> None:
    main = _main(repo)
    history = repo.path / "retrieval-eval-history.jsonl"
    plain = repo.push(main)
    plain_line = json.loads(history.read_text(encoding="utf-8").splitlines()[-1])
    repo.commit({"retrieval-eval.toml": GATED + CHALLENGERS}, "challengers")
    baseline = (repo.path / "baseline.json").read_bytes()
    challenged = repo.push(repo.head(), baseline_update="ratchet")
    challenged_line = json.loads(history.read_text(encoding="utf-8").splitlines()[-1])

    assert challenged.outputs["verdict"] == plain.outputs["verdict"] == "passed", challenged.log
    # The same datasets and metrics (latency aside, which no two runs share, the same values).
    assert challenged_line["aggregates"].keys() == plain_line["aggregates"].keys()
    for name, metrics in plain_line["aggregates"].items():
        theirs = challenged_line["aggregates"][name]
        assert theirs.keys() == metrics.keys()
        assert {m: v for m, v in theirs.items() if "latency" not in m} == {
            m: v for m, v in metrics.items() if "latency" not in m
        }
    text = history.read_text(encoding="utf-8") + (repo.path / "baseline.json").read_text()
    assert "bm25-stemmed" not in text and "like-words" not in text
    # The ratchet raises the gated retriever's numbers only; a challenger's are never taken.
    after = json.loads((repo.path / "baseline.json").read_text(encoding="utf-8"))
    before = json.loads(baseline)
    assert (
        after["datasets"]["keyword.jsonl"]["aggregates"]["mrr@10"]
        == before["datasets"]["keyword.jsonl"]["aggregates"]["mrr@10"]
        == 0.0
    )
