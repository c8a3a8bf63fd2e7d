"""Threat: a retriever that runs only on a push rewrites baseline.json (every value 1.0 →
0.0) while the run passes, and the following step commits the zeros.

Where the boundary cannot keep it out of the workspace (here: a run outside the image),
retrieval-eval reads the baseline and the history before the evaluation and checks them
after it, before anything of its own is written: a file the run did not write must be as
it was, a baseline it wrote must hold the run's own numbers. Anything else is put back and
the run is an error, so a commit step that follows a successful run never runs.
"""

from __future__ import annotations

import json
import sys

import pytest

from tests.action.project import CONFIG
from tests.security.harness import Repo, Run

pytestmark = pytest.mark.slow

# Answers every query perfectly (it reads the fixtures), so the run passes; on `index` it
# zeroes every value of baseline.json, or appends a forged line to the history.
RETRIEVER = """\
import json, sys
answers = {}
with open("datasets/keyword.jsonl") as handle:
    for line in handle:
        fixture = json.loads(line)
        answers[fixture["query"]] = fixture["expected_top_k_ids"]
def zero(value):
    if isinstance(value, dict):
        return {k: v if k in ("k", "first_relevant_rank") else zero(v) for k, v in value.items()}
    if isinstance(value, list):
        return [zero(v) for v in value]
    return 0.0 if isinstance(value, float) else value
for line in sys.stdin:
    request = json.loads(line)
    if request["op"] == "index":
        if sys.argv[1] == "baseline":
            with open("baseline.json") as handle:
                baseline = json.load(handle)
            with open("baseline.json", "w") as handle:
                json.dump(zero(baseline), handle)
        else:
            with open("retrieval-eval-history.jsonl", "a") as handle:
                handle.write('{"commit": "forged"}\\n')
        print(json.dumps({"ok": True}), flush=True)
    else:
        hits = [{"id": d, "score": 1.0} for d in answers.get(request["query"], [])]
        print(json.dumps({"hits": hits}), flush=True)
"""


def push_with_retriever(repo: Repo, target: str) -> tuple[bytes, bytes | None, Run]:
    """A baseline established with BM25 and committed; then a push that switches
    keyword.jsonl to the retriever. Returns the committed baseline and history, and the run."""
    repo.establish_baseline()
    custom = (
        '\n[dataset_retrievers]\n"keyword.jsonl" = "custom"\n\n[retrievers.custom]\n'
        f'command = [{json.dumps(sys.executable)}, "search.py", "{target}"]\n'
    )
    repo.commit({"retrieval-eval.toml": CONFIG + custom, "search.py": RETRIEVER}, "push-only")
    baseline = (repo.path / "baseline.json").read_bytes()
    history = repo.path / "retrieval-eval-history.jsonl"
    before = history.read_bytes() if history.exists() else None
    return baseline, before, repo.push(repo.head())


def test_a_baseline_zeroed_by_the_retriever_is_put_back_and_the_run_fails(repo: Repo) -> None:
    committed, _, run = push_with_retriever(repo, "baseline")

    assert run.returncode == 2, run.log
    assert run.outputs["verdict"] == "error"
    assert (repo.path / "baseline.json").read_bytes() == committed
    assert "baseline.json: changed during the run, not by retrieval-eval" in run.log
    [status] = repo.github.statuses_for(repo.head())
    assert status["state"] == "error"


def test_a_history_line_forged_by_the_retriever_is_put_back(repo: Repo) -> None:
    _, history, run = push_with_retriever(repo, "history")

    assert run.returncode == 2, run.log
    assert "retrieval-eval-history.jsonl: changed during the run" in run.log
    path = repo.path / "retrieval-eval-history.jsonl"
    assert (path.read_bytes() if path.exists() else None) == history
    assert b"forged" not in (path.read_bytes() if path.exists() else b"")
