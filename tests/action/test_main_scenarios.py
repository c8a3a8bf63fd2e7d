"""End to end: ``retrieval-eval action`` as a subprocess, a real git workspace, the fake API.

Each scenario is what a user sees on GitHub: the comment, the status, the exit
code, the job summary and the step outputs.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from retrieval_eval.index.model_install import default_model_dir
from tests.action.git_repo import commit_all, git, write
from tests.action.payloads import (
    pull_request_event,
    push_event,
    workflow_dispatch_event,
)
from tests.action.project import (
    REGRESSING_NOTES,
    SEMANTIC_FIXTURES,
    fixture_lines,
    new_project,
)
from tests.support.action import ActionRun, run_action
from tests.support.fake_github import FakeGitHub
from tests.support.runner_env import TOKEN

# Each scenario starts the Action as a process once or more (about 3 s each).
pytestmark = pytest.mark.slow

RUN_URL = "https://github.example/octo/notes/actions/runs/4242"
MARKER = "<!-- retrieval-eval:retrieval-eval -->"


@dataclass
class Repo:
    path: Path
    runs: Path
    github: FakeGitHub
    api_url: str  # kept, so a scenario can stop the server and still point at it
    count: int = 0

    def commit(self, files: dict[str, str], message: str) -> str:
        write(self.path, files)
        return commit_all(self.path, message)

    def action(
        self,
        event_name: str,
        payload: dict[str, object],
        sha: str,
        extra_env: dict[str, str] | None = None,
        **inputs: str,
    ) -> ActionRun:
        self.count += 1
        inputs.setdefault("github_retry_seconds", "5")
        result = run_action(
            self.path,
            self.runs / f"run{self.count}",
            event_name=event_name,
            payload=payload,
            api_url=self.api_url,
            sha=sha,
            extra_env=extra_env,
            **inputs,
        )
        # `::add-mask::TOKEN` is the one line that must name it: the runner consumes it.
        logged = "\n".join(
            line for line in result.log.splitlines() if not line.startswith("::add-mask::")
        )
        assert TOKEN not in logged, "the token leaked into the log"
        assert TOKEN not in result.summary
        return result

    def pull_request(
        self,
        number: int,
        base: str,
        head: str,
        *,
        fork: bool = False,
        action: str = "opened",
        extra_env: dict[str, str] | None = None,
        **inputs: str,
    ) -> ActionRun:
        files = git(self.path, "diff", "--name-only", f"{base}...{head}").splitlines()
        head_repo = "mallory/notes" if fork else "octo/notes"
        self.github.add_pull(number, head_sha=head, base_sha=base, files=files, head_repo=head_repo)
        payload = pull_request_event(
            number=number,
            head_sha=head,
            base_sha=base,
            head_repo=head_repo,
            action=action,
            changed_files=len(files),
        )
        # The runner checks out the merge commit; the head commit stands in for it here.
        git(self.path, "checkout", "-q", head)
        return self.action("pull_request", payload, "e" * 40, extra_env, **inputs)

    def push(
        self,
        sha: str,
        *,
        branch: str = "main",
        extra_env: dict[str, str] | None = None,
        **inputs: str,
    ) -> ActionRun:
        git(self.path, "checkout", "-q", sha)
        return self.action("push", push_event(sha, branch=branch), sha, extra_env, **inputs)


@pytest.fixture
def repo(tmp_path: Path, github: FakeGitHub) -> Iterator[Repo]:
    path = tmp_path / "workspace"
    new_project(path)
    yield Repo(path=path, runs=tmp_path / "runs", github=github, api_url=github.base_url)


def statuses(repo: Repo, sha: str) -> list[tuple[str, str, str | None]]:
    return [(s["state"], s["context"], s["target_url"]) for s in repo.github.statuses_for(sha)]


def establish_baseline_on_main(repo: Repo) -> str:
    """The documented recipe: a push run writes baseline.json, a later step commits it."""
    first = git(repo.path, "rev-parse", "HEAD")
    pushed = repo.push(first)
    assert pushed.returncode == 0, pushed.log
    assert pushed.outputs["verdict"] == "baseline-established"
    assert (repo.path / "baseline.json").is_file()
    return commit_all(repo.path, "retrieval-eval: establish baseline")


def branch(repo: Repo, base: str, name: str) -> None:
    git(repo.path, "checkout", "-q", "-B", name, base)


# --- first run, second push ------------------------------------------------------------------


def test_first_pull_request_run_establishes_the_baseline_comments_and_succeeds(repo: Repo) -> None:
    base = git(repo.path, "rev-parse", "HEAD")
    branch(repo, base, "feature")
    head = repo.commit(
        {"datasets/corpus/travel/porto.md": "# Porto\n\nPort wine cellars.\n"}, "porto"
    )

    result = repo.pull_request(7, base, head)

    assert result.returncode == 0, result.log
    assert result.outputs["verdict"] == "baseline-established"
    [comment] = repo.github.comments_on(7)
    assert comment["body"].startswith(MARKER + "\n")
    assert result.outputs["comment-url"] == comment["html_url"]
    assert statuses(repo, head) == [("success", "retrieval-eval", RUN_URL)]
    assert repo.github.statuses_for("e" * 40) == []  # never the merge commit
    assert "baseline established" in result.summary.lower()
    assert Path(result.outputs["report-json"]).is_file()
    assert json.loads(result.outputs["metrics"])["keyword.jsonl"]["mrr@10"] == 1.0
    # On a pull request, the base has no baseline: nothing is written into the workspace.
    assert not (repo.path / "baseline.json").exists()


def test_a_second_push_updates_the_same_comment(repo: Repo) -> None:
    base = git(repo.path, "rev-parse", "HEAD")
    branch(repo, base, "feature")
    first = repo.commit({"README.md": "# notes\n\nv1\n"}, "v1")
    assert repo.pull_request(7, base, first).returncode == 0
    second = repo.commit({"README.md": "# notes\n\nv2\n"}, "v2")
    result = repo.pull_request(7, base, second, action="synchronize")

    assert result.returncode == 0, result.log
    comments = repo.github.comments_on(7)
    assert len(comments) == 1
    assert len(repo.github.requests_to("PATCH", "/issues/comments/")) == 1
    assert result.outputs["comment-url"] == comments[0]["html_url"]
    assert statuses(repo, first) == [("success", "retrieval-eval", RUN_URL)]
    assert statuses(repo, second) == [("success", "retrieval-eval", RUN_URL)]


# --- regression ------------------------------------------------------------------------------


def test_a_regression_fails_the_status_and_the_step(repo: Repo) -> None:
    main = establish_baseline_on_main(repo)
    branch(repo, main, "break-deploy")
    head = repo.commit(REGRESSING_NOTES, "rewrite two notes")

    result = repo.pull_request(9, main, head)

    assert result.returncode == 1, result.log
    assert result.outputs["verdict"] == "regression"
    [status] = repo.github.statuses_for(head)
    assert status["state"] == "failure"
    assert status["description"].startswith(
        "Regression: keyword.jsonl MRR@10 1.000 → 0.667 (−33.3%)"
    )
    assert len(status["description"]) <= 140
    [comment] = repo.github.comments_on(9)
    assert "regress" in comment["body"].lower()


def test_fail_on_regression_false_reports_but_exits_0(repo: Repo) -> None:
    main = establish_baseline_on_main(repo)
    branch(repo, main, "break-deploy")
    head = repo.commit(REGRESSING_NOTES, "rewrite two notes")

    result = repo.pull_request(9, main, head, fail_on_regression="false")

    assert result.returncode == 0, result.log
    assert result.outputs["verdict"] == "regression"
    assert [s["state"] for s in repo.github.statuses_for(head)] == ["failure"]


def test_a_pull_request_cannot_loosen_its_own_gate_by_editing_the_baseline(repo: Repo) -> None:
    main = establish_baseline_on_main(repo)
    branch(repo, main, "loosen")
    repo.commit(REGRESSING_NOTES, "rewrite two notes")
    # The PR also rewrites baseline.json to the regressed numbers (as `baseline update` would).
    (repo.path / "baseline.json").unlink()
    rewritten = repo.push(git(repo.path, "rev-parse", "HEAD"))
    assert rewritten.outputs["verdict"] == "baseline-established"
    head = commit_all(repo.path, "lower the baseline")

    result = repo.pull_request(10, main, head)

    assert result.returncode == 1, result.log
    assert result.outputs["verdict"] == "regression"
    [comment] = repo.github.comments_on(10)
    assert (
        "⚠️ **This pull request changes baseline.json.** The gate used the version at the "
        f"base commit {main[:7]}" in comment["body"]
    )
    assert "::warning title=baseline changed::" in result.stdout


# --- path filter -----------------------------------------------------------------------------


def test_a_pull_request_touching_no_watched_path_is_skipped_with_a_success_status(
    repo: Repo,
) -> None:
    base = git(repo.path, "rev-parse", "HEAD")
    branch(repo, base, "docs")
    head = repo.commit({"README.md": "# notes search\n\nMore words.\n"}, "docs only")

    result = repo.pull_request(11, base, head, paths="datasets/**\nretrieval-eval.toml")

    assert result.returncode == 0, result.log
    assert result.outputs["verdict"] == "skipped"
    assert [(s["state"], s["description"]) for s in repo.github.statuses_for(head)] == [
        ("success", "skipped: no changes under datasets/**, retrieval-eval.toml")
    ]
    assert repo.github.comments_on(11) == []
    assert not (repo.path / "retrieval-eval-report").exists()  # nothing was evaluated
    assert "skipped: no changes under datasets/**, retrieval-eval.toml" in result.summary


def test_a_pull_request_touching_a_watched_path_is_evaluated(repo: Repo) -> None:
    base = git(repo.path, "rev-parse", "HEAD")
    branch(repo, base, "notes")
    head = repo.commit({"datasets/corpus/travel/porto.md": "# Porto\n\nPort wine.\n"}, "porto")
    result = repo.pull_request(12, base, head, paths="datasets/**\n!datasets/**/*.txt")
    assert result.outputs["verdict"] == "baseline-established", result.log


def test_dense_retrieval_with_the_real_model_and_the_cache_dir_input(repo: Repo) -> None:
    """The one scenario on the real ONNX model, found the container's way.

    `make test` installs the model under this user's HOME; the runner gives the Action another
    HOME, and the image names the model folder in RETRIEVAL_EVAL_MODEL_DIR instead.
    """
    base = git(repo.path, "rev-parse", "HEAD")
    branch(repo, base, "semantic")
    semantic = fixture_lines(SEMANTIC_FIXTURES, retrieval_type="semantic")
    head = repo.commit({"datasets/semantic.jsonl": semantic}, "add semantic fixtures")
    files = git(repo.path, "diff", "--name-only", f"{base}...{head}").splitlines()
    repo.github.add_pull(16, head_sha=head, base_sha=base, files=files)
    git(repo.path, "checkout", "-q", head)

    result = repo.action(
        "pull_request",
        pull_request_event(number=16, head_sha=head, base_sha=base),
        sha="e" * 40,
        extra_env={"RETRIEVAL_EVAL_MODEL_DIR": str(default_model_dir(Path.home()))},
        cache_dir="build/embedding-cache",
    )

    assert result.returncode == 0, result.log
    assert set(json.loads(result.outputs["metrics"])) == {"keyword.jsonl", "semantic.jsonl"}
    [comment] = repo.github.comments_on(16)
    assert "### semantic.jsonl · dense · 4 queries" in comment["body"]
    assert any((repo.path / "build" / "embedding-cache").iterdir())


# --- push and manual runs --------------------------------------------------------------------


def test_push_leaves_the_established_baseline_for_a_commit_step(repo: Repo) -> None:
    sha = git(repo.path, "rev-parse", "HEAD")
    result = repo.push(sha)
    assert result.returncode == 0, result.log
    assert json.loads((repo.path / "baseline.json").read_text())  # valid JSON, written
    assert statuses(repo, sha) == [("success", "retrieval-eval", RUN_URL)]
    assert repo.github.requests_to("POST", "/comments") == []
    # The next push is gated against it.
    again = repo.push(commit_all(repo.path, "commit the baseline"))
    assert again.outputs["verdict"] == "passed", again.log


def test_pushes_to_main_are_recorded_in_the_history_and_a_pull_request_shows_the_trend(
    repo: Repo,
) -> None:
    base = establish_baseline_on_main(repo)
    history = repo.path / "retrieval-eval-history.jsonl"
    second = repo.push(base)
    assert second.outputs["verdict"] == "passed", second.log
    lines = [json.loads(line) for line in history.read_text().splitlines()]
    assert [line["commit"] for line in lines] == [git(repo.path, "rev-parse", "HEAD^"), base]
    assert lines[1]["aggregates"]["keyword.jsonl"]["mrr@10"] == pytest.approx(1.0)
    assert "Recorded this run in retrieval-eval-history.jsonl" in second.log
    main = commit_all(repo.path, "retrieval-eval: record the run")

    # A push to another branch is not recorded.
    branch(repo, main, "feature")
    feature = repo.push(main, branch="feature")
    assert feature.returncode == 0, feature.log
    assert len(history.read_text().splitlines()) == 2

    head = repo.commit(REGRESSING_NOTES, "rewrite two notes")
    result = repo.pull_request(9, main, head)
    assert result.outputs["verdict"] == "regression", result.log
    [comment] = repo.github.comments_on(9)
    # The two recorded runs and this one, as a sparkline before the value.
    assert "| keyword.jsonl | ██▁\u00a00.667 | −33.3% |" in comment["body"]
    assert "| keyword.jsonl | ██▁\u00a00.667 | −33.3% |" in result.summary


def test_workflow_dispatch_evaluates_the_checked_out_commit(repo: Repo) -> None:
    sha = git(repo.path, "rev-parse", "HEAD")
    result = repo.action("workflow_dispatch", workflow_dispatch_event(), sha=sha)
    assert result.returncode == 0, result.log
    assert [s["state"] for s in repo.github.statuses_for(sha)] == ["success"]


# --- inputs and validation -------------------------------------------------------------------


def test_a_bad_input_names_itself_and_exits_2_with_a_summary(repo: Repo) -> None:
    result = repo.push(git(repo.path, "rev-parse", "HEAD"), comment="sticky", tolerance="lots")
    assert result.returncode == 2
    first, last = _without_masks(result.stdout).splitlines()
    assert first == (
        "::error::the Action's inputs are not valid:%0A"
        "  - input `tolerance`: accepts a number from 0 to 1, got 'lots'%0A"
        "  - input `comment`: accepts update | new | off, got 'sticky'"
    )
    # The log ends with the verdict, cut to a status description's length.
    assert last.startswith("::error title=retrieval-eval::error: the Action's inputs are not valid")
    # The summary escapes the message as the comment would (it renders as the same text).
    assert "input &#96;comment&#96;: accepts update \\| new \\| off, got 'sticky'" in result.summary
    assert "```" not in result.summary
    assert result.outputs == {"verdict": "error"}
    assert repo.github.requests == []


def test_invalid_datasets_become_error_annotations_on_the_right_line(repo: Repo) -> None:
    lines = (repo.path / "datasets" / "keyword.jsonl").read_text().splitlines()
    lines[2] = lines[2].replace('"query": "trams and pastel de nata"', '"query": ""')
    write(repo.path, {"datasets/keyword.jsonl": "\n".join(lines) + "\n"})
    sha = commit_all(repo.path, "break a fixture")

    result = repo.push(sha)

    assert result.returncode == 1, result.log
    assert result.outputs["verdict"] == "invalid"
    assert "::error file=datasets/keyword.jsonl,line=3::" in result.stdout
    assert [s["state"] for s in repo.github.statuses_for(sha)] == ["failure"]


def _without_masks(stdout: str) -> str:
    """What the runner shows: it consumes the `::add-mask::` lines printed first."""
    return "".join(
        line for line in stdout.splitlines(keepends=True) if not line.startswith("::add-mask::")
    )


# --- ownership ---------------------------------------------------------------------------------


def owners(root: Path) -> dict[str, tuple[int, int]]:
    found = {}
    for folder, dirs, files in os.walk(root):
        for name in (*dirs, *files):
            path = Path(folder) / name
            status = path.lstat()
            found[str(path.relative_to(root))] = (status.st_uid, status.st_gid)
    return found


@pytest.mark.skipif(os.geteuid() != 0, reason="only root can give files away")
def test_what_a_run_as_root_writes_belongs_to_the_workspaces_owner(repo: Repo) -> None:
    """The container runs as root; on a self-hosted runner the workspace belongs to the
    runner's user, whose later steps must be able to replace and remove what the Action
    wrote there: the report folder, the baseline and the history (this project's BM25 needs
    no embedding cache; tests/container/test_runner_container.py covers one)."""
    sha = git(repo.path, "rev-parse", "HEAD")
    user = (4242, 4343)
    for path in [repo.path, *(repo.path / name for name in owners(repo.path))]:
        os.chown(path, *user, follow_symlinks=False)

    # Not repo.push: git refuses to work as root in a repository another user owns.
    pushed = repo.action("push", push_event(sha), sha=sha)

    assert pushed.returncode == 0, pushed.log
    written = owners(repo.path)
    for name in ("baseline.json", "retrieval-eval-history.jsonl"):
        assert name in written, sorted(written)
    assert any(name.startswith("retrieval-eval-report/") for name in written)
    assert {name: owner for name, owner in written.items() if owner != user} == {}
    assert repo.path.stat().st_uid == user[0]
