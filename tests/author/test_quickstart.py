"""The README's Quickstart, run as written on a fresh copy of our notes corpus, to the end.

The scratch repository keeps its notes in `docs/notes/` (where `init` finds them) and has
them committed on `main` before retrieval-eval arrives. On a branch, every `retrieval-eval`
line of the Quickstart block runs through the console script: `generate` against the
loopback Messages API with the real client, `review` with a person's keystrokes on stdin
(accept ten, then quit), and `run` writes the baseline. The block's `git` lines run as
written; `git push` is what opens the pull request, so there the test opens it on the fake
GitHub API and runs `retrieval-eval action` on it as the runner would: the adoption pull
request establishes the baseline, posts the comment and sets a success status. Lines for
pip and the shell are what a user's machine does.
"""

from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest

from retrieval_eval.index.model_install import default_model_dir
from tests.action.git_repo import GIT_ENV, commit_all, git
from tests.author.cli import retrieval_eval
from tests.author.fake_writer import writer
from tests.security.harness import Repo
from tests.support.fake_anthropic import FakeAnthropic
from tests.support.fake_github import FakeGitHub
from tests.support.runner_env import TOKEN


def quickstart_lines(readme: str) -> list[list[str]]:
    """Each command of the block as words (``a && b`` is two commands), comments dropped."""
    block = readme.split("<!-- quickstart:start -->")[1].split("<!-- quickstart:end -->")[0]
    body = re.search(r"```sh\n(.*?)```", block, re.DOTALL)
    assert body is not None
    commands = []
    for line in body.group(1).splitlines():
        words = shlex.split(line, comments=True)
        while "&&" in words:
            at = words.index("&&")
            commands.append(words[:at])
            words = words[at + 1 :]
        if words:
            commands.append(words)
    return commands


def threshold_snippet(stderr: str) -> str:
    """The TOML lines `run` suggests after a breached threshold, unindented."""
    after = stderr.split("next: if a bound does not fit a dataset", 1)[1].splitlines()[1:]
    lines = []
    for line in after:
        if not line.startswith("  "):
            break
        lines.append(line[2:])
    assert lines, stderr
    return "\n".join(lines) + "\n"


def quickstart_commands(readme: str) -> list[list[str]]:
    return [c[1:] for c in quickstart_lines(readme) if c[0] == "retrieval-eval"]


@pytest.mark.slow
def test_the_readme_quickstart_ends_in_a_gated_baseline(tmp_path: Path, repo_root: Path) -> None:
    commands = quickstart_commands((repo_root / "README.md").read_text())
    assert [c[0] for c in commands] == [
        "model", "init", "generate", "review", "review", "review", "run",
    ]  # fmt: skip
    lines = quickstart_lines((repo_root / "README.md").read_text())
    git_lines = [c[1:] for c in lines if c[0] == "git"]
    assert [c[0] for c in git_lines] == ["add", "commit", "push"]
    project = tmp_path / "project"
    shutil.copytree(repo_root / "datasets" / "corpus", project / "docs" / "notes")
    (project / "README.md").write_text("# notes\n", encoding="utf-8")
    subprocess.run(["git", "init", "-q", "-b", "main", str(project)], check=True)
    main = commit_all(project, "notes, before retrieval-eval")
    git(project, "checkout", "-q", "-b", "gate-retrieval-quality")

    with FakeAnthropic(responder=writer()) as fake:
        env = {"ANTHROPIC_API_KEY": fake.api_key, "ANTHROPIC_BASE_URL": fake.base_url}
        for args in commands:
            if args[0] == "model":
                continue  # installed once per machine; `make test` did it
            stdin = "a\n" * 10 + "x\n" if args[0] == "review" else ""
            result = retrieval_eval(*args, cwd=project, stdin=stdin, env=env)
            if args[0] != "run":
                assert result.returncode == 0, (args, result.stdout, result.stderr)
            if args[0] == "review":
                assert "10 accepted" in result.stdout

    # The first run writes the baseline. Its verdict is `baseline-established` (exit 0),
    # or `threshold` (exit 1) when a dataset misses one of the default absolute bars,
    # which the report names; never an error.
    report = json.loads((project / "retrieval-eval-report" / "report.json").read_text())
    assert (report["verdict"], result.returncode) in {
        ("baseline-established", 0),
        ("threshold", 1),
    }, result.stderr
    assert report["baseline_written"] is True
    if report["verdict"] == "threshold":
        assert "Threshold breached: " in result.stderr
        # As the README says next: set your own bar. The user pastes the lines `run` printed
        # into retrieval-eval.toml, and the next run passes against the baseline just written.
        config = project / "retrieval-eval.toml"
        config.write_text(config.read_text() + "\n" + threshold_snippet(result.stderr))
        again = retrieval_eval("run", cwd=project)
        assert again.returncode == 0, again.stderr
    baseline = json.loads((project / "baseline.json").read_text())
    assert sorted(baseline["datasets"]) == ["hybrid.jsonl", "keyword.jsonl", "semantic.jsonl"]
    # init found the notes: the configured corpus is docs/notes or the docs folder holding it.
    corpus = tomllib.loads((project / "retrieval-eval.toml").read_text())["corpus"]
    assert corpus in {"docs", "docs/notes"}
    validate = retrieval_eval("validate", "datasets", "--corpus", corpus, cwd=project)
    assert validate.returncode == 0, validate.stdout + validate.stderr

    # The block's git lines, as written; `git push` is where the pull request is opened.
    for args in git_lines[:-1]:
        subprocess.run(["git", *args], cwd=project, env=GIT_ENV, check=True)
    assert git(project, "status", "--porcelain") == ""  # everything the user needs is in
    head = git(project, "rev-parse", "HEAD")
    with FakeGitHub(token=TOKEN, repository="octo/notes") as github:
        adopting = Repo(path=project, runs=tmp_path / "runs", github=github)
        model = {"RETRIEVAL_EVAL_MODEL_DIR": str(default_model_dir(Path.home()))}
        pull = adopting.pull_request(1, main, head, extra_env=model)

    assert pull.outputs["verdict"] == "baseline-established", pull.log
    assert pull.returncode == 0, pull.log
    assert [s["state"] for s in pull.statuses] == ["success"]
    assert "adds retrieval-eval" in pull.comment
    assert "the gate starts after merge" in pull.comment
