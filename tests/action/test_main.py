"""The entry's promise: whatever fails, the summary and the verdict output say so, exit 2."""

from __future__ import annotations

import io
from pathlib import Path

from retrieval_eval.action.main import run_action
from retrieval_eval.render.escape import escape_markdown
from retrieval_eval.vocabulary import ExitCode
from tests.support.runner_env import TOKEN, read_outputs, runner_env


def test_an_unreadable_event_still_leaves_a_summary_and_an_output(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    env = runner_env(workspace, event_path=tmp_path / "missing.json")
    log = io.StringIO()

    assert run_action(env, log) == ExitCode.ERROR

    message = (
        f"{tmp_path / 'missing.json'}: cannot read the event payload: No such file or directory"
    )
    summary = (tmp_path / "step_summary.md").read_text()
    # Escaped as the comment is (the path's underscores), and not in a code block.
    assert summary == f"### ❌ retrieval-eval failed\n\n{escape_markdown(message)}\n"
    assert read_outputs(tmp_path / "github_output") == {"verdict": "error"}
    assert f"::error::{message}\n" in log.getvalue()
    assert "github_token=SecretStr('**********')" in log.getvalue()
    assert TOKEN not in log.getvalue()


def test_an_unsupported_event_is_reported_the_same_way(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / ".event.json").write_text("{}")
    env = runner_env(workspace, event_name="issues")
    assert run_action(env, io.StringIO()) == ExitCode.ERROR
    assert "event 'issues' is not supported" in (tmp_path / "step_summary.md").read_text()
