"""`retrieval-eval action` started as the runner starts it: the token the console script
withholds from child processes still reaches the Action (the status it sets is accepted by
the API only with it), and whatever fails is exit 2 with an `error` verdict and summary."""

from __future__ import annotations

from pathlib import Path

from tests.action.payloads import push_event
from tests.support.action import ActionRun, run_action
from tests.support.fake_github import FakeGitHub
from tests.support.runner_env import TOKEN

SHA = "a" * 40


def _logged(run: ActionRun) -> str:
    # `::add-mask::` lines are the runner's to consume: the one place the token may appear.
    return "\n".join(line for line in run.log.splitlines() if not line.startswith("::add-mask::"))


def test_the_withheld_token_still_reaches_the_action(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()  # no corpus: the run fails, and says so on the commit
    with FakeGitHub(token=TOKEN, repository="octo/notes") as github:
        done = run_action(
            workspace,
            tmp_path / "run",
            event_name="push",
            payload=push_event(SHA, branch="main"),
            api_url=github.base_url,
            sha=SHA,
            github_retry_seconds="5",
        )
        statuses = github.statuses_for(SHA)

    assert done.returncode == 2
    assert done.outputs["verdict"] == "error"
    assert [(s["state"], s["description"]) for s in statuses] == [
        ("error", "error: datasets/corpus: corpus path does not exist")
    ]
    assert TOKEN not in _logged(done)
    assert TOKEN not in done.summary


def test_an_unsupported_event_is_exit_2_with_the_error_in_the_summary(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()

    done = run_action(
        workspace,
        tmp_path / "run",
        event_name="issues",
        payload={},
        api_url="http://127.0.0.1:9/api/v3",
        sha=SHA,
    )

    assert done.returncode == 2
    assert done.outputs == {"verdict": "error"}
    assert done.summary.startswith(
        "### ❌ retrieval-eval failed\n\nevent 'issues' is not supported"
    )
    assert "::error::event 'issues' is not supported" in done.stdout
    assert TOKEN not in _logged(done)
