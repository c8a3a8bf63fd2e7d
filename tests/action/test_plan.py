"""The run plan: what a pull request is evaluated with, and what it is gated against.

The retriever, its settings and its code are the system under test: always the pull
request's. The gate's settings are the base commit's, except on the adoption pull request
(the one that adds retrieval-eval, when the base commit has neither a configuration nor a
baseline), which is evaluated with its own settings and establishes the baseline.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.action.git_repo import commit_all, git, init_repo, write
from tests.action.project import CONFIG, NOTES, REGRESSING_NOTES, project_files
from tests.security.harness import Repo
from tests.support.action import CONSOLE_SCRIPT
from tests.support.fake_github import FakeGitHub
from tests.support.runner_env import TOKEN

pytestmark = pytest.mark.slow

# A command retriever that finds nothing: whatever dataset it serves regresses to zero.
NOTHING = """\
import json, sys
for line in sys.stdin:
    request = json.loads(line)
    if request.get("op") == "search":
        print(json.dumps({"hits": []}), flush=True)
    else:
        print(json.dumps({"ok": True}), flush=True)
"""


def test_the_prs_retriever_choice_is_what_gets_evaluated(repo: Repo) -> None:
    main = repo.establish_baseline()
    repo.branch("feature", main)
    custom = (
        '\n[dataset_retrievers]\n"keyword.jsonl" = "custom"\n\n[retrievers.custom]\n'
        f'command = [{json.dumps(sys.executable)}, "nothing.py"]\n'
    )
    head = repo.commit(
        {"retrieval-eval.toml": CONFIG + custom, "nothing.py": NOTHING},
        "serve keyword.jsonl with our own retriever",
    )

    run = repo.pull_request(70, main, head)

    assert run.returncode == 1, run.log
    assert run.outputs["verdict"] == "regression"
    assert "retriever: bm25 → custom" in run.comment
    assert "takes effect after merge" not in run.comment
    # The step's log ends with the verdict, as an error annotation the run page shows.
    last = [line for line in run.log.splitlines() if line.startswith("::")][-1]
    # CONFIG names the seed's rule, whose headline is the first gated metric, MRR@10.
    assert last.startswith("::error title=retrieval-eval::Regression: keyword.jsonl MRR@10")


def test_the_adoption_pull_request_establishes_the_baseline(tmp_path: Path) -> None:
    workspace = tmp_path / "workspace"
    init_repo(workspace)
    files = project_files()
    corpus = {name: text for name, text in files.items() if name.startswith("datasets/corpus/")}
    write(workspace, {**corpus, "README.md": "# notes search\n", ".gitignore": files[".gitignore"]})
    main = commit_all(workspace, "notes, before retrieval-eval")
    git(workspace, "checkout", "-q", "-B", "adopt", main)
    # The README's Quickstart: init and review wrote these, a local run wrote baseline.json.
    write(workspace, {name: text for name, text in files.items() if name not in corpus})
    local = subprocess.run(
        [CONSOLE_SCRIPT, "run", "--quiet"], cwd=workspace, capture_output=True, text=True
    )
    assert local.returncode == 0, local.stderr
    head = commit_all(workspace, "Gate retrieval quality")

    with FakeGitHub(token=TOKEN, repository="octo/notes") as github:
        adopting = Repo(path=workspace, runs=tmp_path / "runs", github=github)
        run = adopting.pull_request(71, main, head)

    assert run.returncode == 0, run.log
    assert run.outputs["verdict"] == "baseline-established", run.log
    assert [s["state"] for s in run.statuses] == ["success"]
    assert "adds retrieval-eval" in run.comment and "the gate starts after merge" in run.comment
    assert len(NOTES) == 8


def test_a_regressed_query_links_to_its_fixture_line_at_the_pull_requests_head(
    repo: Repo,
) -> None:
    main = repo.establish_baseline()
    repo.branch("feature", main)
    head = repo.commit(REGRESSING_NOTES, "rewrite two notes")

    run = repo.pull_request(72, main, head)

    assert run.outputs["verdict"] == "regression", run.log
    # k-005 is the fifth line of datasets/keyword.jsonl; the id does not wrap (U+2011).
    line = f"https://github.example/octo/notes/blob/{head}/datasets/keyword.jsonl#L5"
    assert f'[<code>k\u2011005</code>]({line} "k-005")' in run.comment
    assert "[workflow run](https://github.example/octo/notes/actions/runs/4242)" in run.comment
    # The job summary draws its charts in Mermaid; the comment stays without them.
    assert "```mermaid\n%%{init: " in run.summary and "\nxychart-beta\n" in run.summary
    assert "```mermaid" not in run.comment
    html = (repo.path / "retrieval-eval-report" / "report.html").read_text(encoding="utf-8")
    assert f'href="{line}"' in html


def test_a_plain_run_links_nowhere(repo: Repo) -> None:
    repo.establish_baseline()
    write(repo.path, REGRESSING_NOTES)

    local = subprocess.run(
        [CONSOLE_SCRIPT, "run"], cwd=repo.path, capture_output=True, text=True, check=False
    )

    assert local.returncode == 1, local.stderr
    for name in ("report.md", "report.html"):
        text = (repo.path / "retrieval-eval-report" / name).read_text(encoding="utf-8")
        assert "/blob/" not in text and "/actions/runs/" not in text
    assert "<code>k\u2011005</code>" in local.stdout  # the id, unlinked
