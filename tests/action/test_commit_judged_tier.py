"""A push run with the judged tier, through `retrieval-eval action` on a real git repository
with the real anthropic client against a Messages API on 127.0.0.1, then the commit step of
the workflow `retrieval-eval init` writes, pushing to a bare origin:

- the judgments judged on the fly are committed with the baseline, so the next pull request
  does not pay to judge them again; a pull request commits nothing;
- a gain on the gating tier raises its recorded entry (the ratchet), as a dataset's;
- a tier regression a writer accepted lowers it after the merge, as a dataset's.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.action.git_repo import commit_all, git
from tests.action.payloads import pull_request_event
from tests.action.test_evaluation_judged_tier import (
    BASE_RUN,
    KEY,
    PR_RUN,
    TIER,
    _other,
    established_main,
    new_repo,
    push,
    report,
    responder,
    run_file,
)
from tests.action.test_main_scenarios import Repo, branch
from tests.author.cli import retrieval_eval
from tests.support.action import ActionRun
from tests.support.fake_anthropic import FakeAnthropic
from tests.support.fake_github import FakeGitHub

pytestmark = pytest.mark.slow

JUDGMENTS = "datasets/judged/judgments.jsonl"
LABEL = "retrieval-eval: accept"


@pytest.fixture
def workspace(tmp_path: Path, github: FakeGitHub) -> Repo:
    return Repo(
        path=tmp_path / "workspace", runs=tmp_path / "runs", github=github, api_url=github.base_url
    )


def commit_step(tmp_path: Path) -> str:
    """The script of the baseline workflow's commit step, as `retrieval-eval init` writes it."""
    project = tmp_path / "init"
    (project / "kb").mkdir(parents=True)
    (project / "kb" / "note.md").write_text("# A note\n", encoding="utf-8")
    assert retrieval_eval("init", "--corpus", "kb", cwd=project).returncode == 0
    workflow = yaml.safe_load(
        (project / ".github/workflows/retrieval-eval-baseline.yml").read_text(encoding="utf-8")
    )
    step = workflow["jobs"]["baseline"]["steps"][3]
    assert step["env"]["FILES"] == "${{ steps.evaluate.outputs.commit-files }}"
    script: str = step["run"]
    return script


def with_origin(repo: Repo, tmp_path: Path) -> Path:
    origin = tmp_path / "origin.git"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(origin)], check=True)
    git(repo.path, "remote", "add", "origin", str(origin))
    git(repo.path, "push", "-q", "origin", "HEAD:main")
    return origin


def run_commit_step(script: str, repo: Repo, run: ActionRun) -> None:
    """The step after the Action's, with its output as the workflow passes it."""
    done = subprocess.run(
        ["bash", "-e", "-c", script],
        cwd=repo.path,
        env={
            **os.environ,
            "TOKEN": "t0ken",
            "GITHUB_REF_NAME": "main",
            "FILES": run.outputs["commit-files"],
        },
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr


def shown(origin: Path, path: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(origin), "show", f"main:{path}"],
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout


def log(origin: Path) -> list[str]:
    return git(origin, "log", "--format=%s", "main").splitlines()


def test_a_push_commits_the_judgments_it_judged_and_a_pull_request_commits_nothing(
    workspace: Repo, tmp_path: Path
) -> None:
    script = commit_step(tmp_path)
    with FakeAnthropic(api_key=KEY, responder=responder(agrees=True)) as fake:
        new_repo(workspace.path, fake)
        origin = with_origin(workspace, tmp_path)
        first = git(workspace.path, "rev-parse", "HEAD")

        pushed = push(workspace, first)
        assert pushed.returncode == 0, pushed.log
        assert report(workspace)["judged_tier"]["judged_on_the_fly"] == 16
        assert sorted(pushed.outputs["commit-files"].splitlines()) == [
            "baseline.json",
            JUDGMENTS,
            "retrieval-eval-badge.json",
            "retrieval-eval-history.jsonl",
        ]
        run_commit_step(script, workspace, pushed)

        # One commit holds the baseline and the 16 judgments, as the workspace has them.
        assert log(origin)[0] == "retrieval-eval: baseline and history"
        committed = shown(origin, JUDGMENTS)
        assert len(committed.splitlines()) == 16
        assert committed == (workspace.path / JUDGMENTS).read_text(encoding="utf-8")
        assert json.loads(shown(origin, "baseline.json"))["judged_tier"] is not None

        # The next push judges nothing: its judgments are unchanged and not named.
        main = git(origin, "rev-parse", "main")
        git(workspace.path, "fetch", "-q", "origin", "main")
        calls = len(fake.requests)
        again = push(workspace, main)
        assert again.returncode == 0, again.log
        assert len(fake.requests) == calls
        assert JUDGMENTS not in again.outputs["commit-files"].splitlines()

        # A pull request judges its new documents on the fly and leaves nothing to commit.
        branch(workspace, main, "worse-tier")
        head = workspace.commit({"run.trec": run_file(PR_RUN)}, "worse tier")
        files = git(workspace.path, "diff", "--name-only", f"{main}...{head}").splitlines()
        workspace.github.add_pull(41, head_sha=head, base_sha=main, files=files)
        payload = pull_request_event(
            number=41, head_sha=head, base_sha=main, changed_files=len(files)
        )
        result = workspace.action(
            "pull_request", payload, sha="e" * 40, extra_env={"ANTHROPIC_API_KEY": KEY}
        )
        assert result.outputs["verdict"] == "regression", result.log
        assert report(workspace)["judged_tier"]["judged_on_the_fly"] == 8
        assert result.outputs["commit-files"] == ""
        before = log(origin)
        run_commit_step(script, workspace, result)
        assert log(origin) == before
        assert shown(origin, JUDGMENTS) == committed


# Answers the human queries from their fixtures; on `index` it turns every relevant
# judgment of the tier into "not relevant" (still current: same model, prompt, text), so a
# run that read the file after it would score main's own top k as misses, and commit that.
FORGER = """\
import json, sys
answers = {}
with open("datasets/keyword.jsonl") as handle:
    for line in handle:
        fixture = json.loads(line)
        answers[fixture["query"]] = fixture["expected_top_k_ids"]
for line in sys.stdin:
    request = json.loads(line)
    if request["op"] == "index":
        path = "datasets/judged/judgments.jsonl"
        with open(path) as handle:
            forged = [dict(json.loads(line), grade=0) for line in handle]
        with open(path, "w") as handle:
            handle.writelines(json.dumps(j) + "\\n" for j in forged)
        print(json.dumps({"ok": True}), flush=True)
    else:
        hits = [{"id": d, "score": 1.0} for d in answers.get(request["query"], [])]
        print(json.dumps({"hits": hits}), flush=True)
"""


def test_judgments_the_retriever_rewrote_during_a_push_are_put_back_and_not_committed(
    workspace: Repo,
) -> None:
    """The retriever runs in the workspace: what it writes to the judgments file is never
    handed to the commit step; the file is put back and the run is an error."""
    with FakeAnthropic(api_key=KEY, responder=responder(agrees=True)) as fake:
        new_repo(workspace.path, fake)
        established_main(workspace, fake)
        recorded = (workspace.path / JUDGMENTS).read_bytes()
        config = (workspace.path / "retrieval-eval.toml").read_text(encoding="utf-8")
        custom = config.replace('"keyword.jsonl" = "run-file"', '"keyword.jsonl" = "custom"')
        custom += f'\n[retrievers.custom]\ncommand = [{json.dumps(sys.executable)}, "forge.py"]\n'
        tampering = workspace.commit(
            {"retrieval-eval.toml": custom, "forge.py": FORGER}, "a retriever that writes"
        )

        result = push(workspace, tampering)

        assert result.returncode == 2, result.log
        assert result.outputs["verdict"] == "error"
        assert f"{JUDGMENTS}: changed during the run, not by retrieval-eval" in result.log
        assert (workspace.path / JUDGMENTS).read_bytes() == recorded
        assert result.outputs["commit-files"] == ""
        # The tier was scored on the judgments as committed, not on the forged ones.
        assert report(workspace)["judged_tier"]["report"]["aggregates"]["mrr@10"]["value"] == 1.0


def tier_entry(repo: Repo) -> dict[str, Any]:
    baseline = json.loads((repo.path / "baseline.json").read_text(encoding="utf-8"))
    entry: dict[str, Any] = baseline["judged_tier"]
    return entry


# Main's retriever ranks each tier query's document second: MRR 0.5 on the tier.
SECOND = {
    **BASE_RUN,
    **{qid: [_other(doc), doc] for qid, (_, doc) in TIER.items()},
}


def test_the_ratchet_raises_the_tiers_recorded_entry_on_a_gain(workspace: Repo) -> None:
    with FakeAnthropic(api_key=KEY, responder=responder(agrees=True)) as fake:
        new_repo(workspace.path, fake)
        main = workspace.commit({"run.trec": run_file(SECOND)}, "tier documents second")
        first = push(workspace, main)
        assert first.returncode == 0, first.log
        assert tier_entry(workspace)["aggregates"]["mrr@10"] == pytest.approx(0.5)
        main = commit_all(workspace.path, "retrieval-eval: baseline, judgments")

        # The same documents, the tier's own first: a gain, nothing new to judge.
        better = workspace.commit({"run.trec": run_file(BASE_RUN)}, "tier documents first")
        calls = len(fake.requests)
        pushed = push(workspace, better)

        assert pushed.returncode == 0, pushed.log
        assert pushed.outputs["verdict"] == "passed"
        assert len(fake.requests) == calls
        assert report(workspace)["judged_tier"]["gates"] is True
        entry = tier_entry(workspace)
        assert entry["aggregates"]["mrr@10"] == pytest.approx(1.0)
        assert all(q["metrics"]["mrr@10"] == 1.0 for q in entry["queries"].values())
        assert "queries.jsonl (judged)" in pushed.summary  # listed with what moved
        assert "baseline.json" in pushed.outputs["commit-files"].splitlines()


def test_the_ratchet_leaves_a_tier_that_does_not_gate(workspace: Repo) -> None:
    """Below the floor the tier's numbers decide nothing, so they move nothing either."""
    with FakeAnthropic(api_key=KEY, responder=responder(agrees=False)) as fake:
        new_repo(workspace.path, fake)
        main = workspace.commit({"run.trec": run_file(SECOND)}, "tier documents second")
        assert push(workspace, main).returncode == 0
        commit_all(workspace.path, "retrieval-eval: baseline, judgments")
        better = workspace.commit({"run.trec": run_file(BASE_RUN)}, "tier documents first")

        pushed = push(workspace, better)

        assert pushed.outputs["verdict"] == "passed", pushed.log
        assert report(workspace)["judged_tier"]["not_gating"] == "below-floor"
        assert tier_entry(workspace)["aggregates"]["mrr@10"] == pytest.approx(0.5)


def test_an_accepted_tier_regression_lowers_its_recorded_entry_after_the_merge(
    workspace: Repo,
) -> None:
    with FakeAnthropic(api_key=KEY, responder=responder(agrees=True)) as fake:
        new_repo(workspace.path, fake)
        main = established_main(workspace, fake)
        assert tier_entry(workspace)["aggregates"]["mrr@10"] == pytest.approx(1.0)
        branch(workspace, main, "worse-tier")
        head = workspace.commit({"run.trec": run_file(PR_RUN)}, "worse tier")
        files = git(workspace.path, "diff", "--name-only", f"{main}...{head}").splitlines()
        workspace.github.add_pull(7, head_sha=head, base_sha=main, files=files)
        workspace.github.set_permission("maria", "write")
        env = {"ANTHROPIC_API_KEY": KEY}

        def pr_run(action: str, labels: tuple[str, ...]) -> ActionRun:
            payload = pull_request_event(
                number=7,
                head_sha=head,
                base_sha=main,
                action=action,
                changed_files=len(files),
                labels=labels,
            )
            return workspace.action("pull_request", payload, sha="e" * 40, extra_env=env)

        assert pr_run("opened", ()).outputs["verdict"] == "regression"
        workspace.github.label_event(7, LABEL, actor="maria")
        assert pr_run("labeled", (LABEL,)).outputs["verdict"] == "accepted"

        branch(workspace, main, "main")
        git(workspace.path, "merge", "-q", "--no-ff", head, "-m", "Merge pull request #7")
        merged = git(workspace.path, "rev-parse", "HEAD")
        workspace.github.merge_pull(7, merge_commit_sha=merged)
        pushed = push(workspace, merged)

        assert pushed.returncode == 0, pushed.log
        assert pushed.outputs["verdict"] == "accepted"
        assert "Set baseline.json to this run's values: maria accepted" in pushed.log
        assert tier_entry(workspace)["aggregates"]["mrr@10"] == pytest.approx(0.0)
        # The merge's new documents, judged on the fly, are left for the commit step.
        assert JUDGMENTS in pushed.outputs["commit-files"].splitlines()
