"""The README's Quickstart, run as written on a fresh copy of our notes corpus.

Every `retrieval-eval` line of the Quickstart block runs through the console script:
`generate` against the loopback Messages API with the real client, `review` with a
person's keystrokes on stdin (accept ten, then quit), and the last command is a real
`retrieval-eval run` that establishes the baseline. Lines for pip, the shell and git
are what a user's machine does; the test does the git part itself.
"""

from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
from pathlib import Path

from tests.author.cli import retrieval_eval
from tests.author.fake_writer import writer
from tests.support.fake_anthropic import FakeAnthropic


def quickstart_commands(readme: str) -> list[list[str]]:
    block = readme.split("<!-- quickstart:start -->")[1].split("<!-- quickstart:end -->")[0]
    body = re.search(r"```sh\n(.*?)```", block, re.DOTALL)
    assert body is not None
    commands = []
    for line in body.group(1).splitlines():
        words = shlex.split(line, comments=True)
        if words and words[0] == "retrieval-eval":
            commands.append(words[1:])
    return commands


def test_the_readme_quickstart_ends_in_a_gated_baseline(tmp_path: Path, repo_root: Path) -> None:
    commands = quickstart_commands((repo_root / "README.md").read_text())
    assert [c[0] for c in commands] == [
        "model", "init", "generate", "review", "review", "review", "run",
    ]  # fmt: skip
    project = tmp_path / "project"
    shutil.copytree(repo_root / "datasets" / "corpus", project / "notes")
    subprocess.run(["git", "init", "-q", str(project)], check=True)

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
    baseline = json.loads((project / "baseline.json").read_text())
    assert sorted(baseline["datasets"]) == ["hybrid.jsonl", "keyword.jsonl", "semantic.jsonl"]
    validate = retrieval_eval("validate", "datasets", "--corpus", "notes", cwd=project)
    assert validate.returncode == 0, validate.stdout + validate.stderr
