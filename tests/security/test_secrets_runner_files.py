"""A pull request's retriever cannot act on the job through the runner's file commands.

Threat: the runner names files in GITHUB_ENV, GITHUB_PATH, GITHUB_OUTPUT, GITHUB_STATE and
GITHUB_STEP_SUMMARY; whoever appends to them sets variables (BASH_ENV) and PATH entries
for every later step, forges this step's outputs and summary, or its post step's state.
The retriever is code from the pull request: those variables are withheld from it, while
retrieval-eval itself still writes the step's outputs and summary.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.action.project import CONFIG
from tests.security.harness import Repo

pytestmark = pytest.mark.slow

FILE_COMMANDS = (
    "GITHUB_ENV",
    "GITHUB_PATH",
    "GITHUB_OUTPUT",
    "GITHUB_STATE",
    "GITHUB_STEP_SUMMARY",
)
# A command retriever that appends to every file command it is given, records what it saw,
# then answers nothing and fails.
FORGE = """\
import json, os, sys
seen = {}
for name in NAMES:
    seen[name] = os.environ.get(name)
    if os.environ.get(name):
        with open(os.environ[name], "a") as handle:
            handle.write("BASH_ENV=/tmp/evil\\n# ✅ retrieval-eval passed\\n")
with open(sys.argv[1], "w") as handle:
    json.dump(seen, handle)
sys.exit(1)
""".replace("NAMES", repr(list(FILE_COMMANDS)))


def test_the_retriever_sees_none_of_the_runners_file_commands(
    repo: Repo, tmp_path_factory: pytest.TempPathFactory
) -> None:
    dump = tmp_path_factory.mktemp("dump") / "seen.json"
    main = repo.head()
    repo.branch("feature", main)
    custom = (
        '\n[dataset_retrievers]\n"keyword.jsonl" = "custom"\n\n[retrievers.custom]\n'
        f'command = [{json.dumps(sys.executable)}, "forge.py", {json.dumps(str(dump))}]\n'
    )
    env_file = tmp_path_factory.mktemp("runner") / "set_env"
    env_file.write_text("")
    head = repo.commit(
        {"retrieval-eval.toml": CONFIG + custom, "forge.py": FORGE}, "a retriever that forges"
    )

    run = repo.pull_request(
        50,
        main,
        head,
        extra_env={
            "GITHUB_ENV": str(env_file),
            "GITHUB_PATH": str(env_file),
            "GITHUB_STATE": str(env_file),
        },
    )

    seen = json.loads(dump.read_text(encoding="utf-8"))
    assert seen == dict.fromkeys(FILE_COMMANDS), seen
    assert env_file.read_text() == ""
    assert "BASH_ENV" not in run.summary and "passed" not in run.summary.splitlines()[0]
    # retrieval-eval itself still hands its results back to the runner.
    assert run.outputs["verdict"] == "error", run.log
    assert run.summary.startswith("### ") or "retrieval-eval" in run.summary


def test_the_log_ends_with_the_verdict(repo: Repo) -> None:
    """Whatever happened, the last line of the step's log says the verdict."""
    run = repo.push(repo.head())
    # The log is stdout (workflow commands) then stderr (progress lines): the last command.
    last = [line for line in run.log.splitlines() if line.startswith("::")][-1]
    assert last.startswith("::notice title=retrieval-eval::baseline-established"), run.log


def test_a_workspace_path_is_not_written_through_a_committed_symlink(
    repo: Repo, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """A report folder committed as a symbolic link would make the run write outside the
    workspace; every written path must resolve inside it."""
    outside = tmp_path_factory.mktemp("outside")
    main = repo.head()
    repo.branch("feature", main)
    (repo.path / "retrieval-eval-report").symlink_to(outside, target_is_directory=True)
    head = repo.commit({}, "the report folder is a link")

    run = repo.pull_request(51, main, head)

    assert run.returncode == 2, run.log
    assert list(outside.iterdir()) == []
    assert "report_dir" in run.log and "outside" in run.log
    assert run.statuses[-1]["state"] == "error"


@pytest.mark.parametrize("report_dir", ["../elsewhere", "/tmp/retrieval-eval-elsewhere"])
def test_report_dir_in_the_prs_configuration_is_not_used(repo: Repo, report_dir: str) -> None:
    """`report_dir` is read from the base commit: a pull request that points it outside the
    repository proposes it for after the merge, and the run writes where the base says."""
    main = repo.head()
    repo.branch("feature", main)
    head = repo.commit(
        {"retrieval-eval.toml": f"report_dir = {json.dumps(report_dir)}\n" + CONFIG},
        "write the reports elsewhere",
    )

    run = repo.pull_request(52, main, head)

    assert run.returncode == 0, run.log
    assert not (repo.path.parent / "elsewhere").exists()
    assert not Path("/tmp/retrieval-eval-elsewhere").exists()
    assert (repo.path / "retrieval-eval-report" / "report.json").is_file()
    assert "report_dir" in run.log and "after merge" in run.log
    assert run.statuses[-1]["state"] == "success"


@pytest.mark.parametrize("report_dir", ["../elsewhere", "/tmp/retrieval-eval-elsewhere"])
def test_report_dir_in_the_base_configuration_stays_in_the_workspace(
    repo: Repo, report_dir: str
) -> None:
    main = repo.commit(
        {"retrieval-eval.toml": f"report_dir = {json.dumps(report_dir)}\n" + CONFIG},
        "write the reports elsewhere",
    )
    repo.branch("feature", main)
    head = repo.commit({"notes.txt": "a change\n"}, "a change")

    run = repo.pull_request(52, main, head)

    assert run.returncode == 2, run.log
    assert not (repo.path.parent / "elsewhere").exists()
    assert not Path("/tmp/retrieval-eval-elsewhere").exists()
    assert "`report_dir` must name a path inside the repository" in run.log
    assert run.statuses[-1]["state"] == "error"


def test_the_cache_dir_input_stays_in_the_workspace(repo: Repo) -> None:
    run = repo.push(repo.head(), cache_dir="../cache")
    assert run.returncode == 2, run.log
    assert "input `cache-dir`" in run.log
    assert run.outputs["verdict"] == "error"
