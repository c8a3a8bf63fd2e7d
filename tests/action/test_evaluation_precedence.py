"""Which value wins in the Action: built-in default < configuration file < non-empty input.

The runner passes every declared input, at its ``action.yml`` default when the
workflow does not set it. Each case drives ``retrieval-eval action`` on a push
the way the runner does, with the input absent (its default) or present, and
reads back where the baseline and the report were written and which tolerance
the report records.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.action.git_repo import commit_all, write
from tests.action.payloads import push_event
from tests.action.project import CONFIG, new_project
from tests.support.action import run_action
from tests.support.fake_github import FakeGitHub

FILE_KEYS = """\
baseline = "gate/from-file.json"
report_dir = "reports-from-file"
tolerance = 0.10
"""

# (config file sets the keys, inputs given) -> (baseline file, report folder, tolerance)
CASES = {
    "built-in defaults": (False, False, ("baseline.json", "retrieval-eval-report", 0.05)),
    "config file over defaults": (True, False, ("gate/from-file.json", "reports-from-file", 0.10)),
    "inputs over config file": (True, True, ("gate/from-input.json", "reports-from-input", 0.2)),
    "inputs over defaults": (False, True, ("gate/from-input.json", "reports-from-input", 0.2)),
}

INPUTS = {
    "baseline": "gate/from-input.json",
    "report_dir": "reports-from-input",
    "tolerance": "0.2",
}


@pytest.mark.parametrize("case", list(CASES))
def test_the_documented_precedence_holds_for_each_input(
    case: str, tmp_path: Path, github: FakeGitHub
) -> None:
    file_sets, inputs_given, (baseline, report_dir, tolerance) = CASES[case]
    workspace = tmp_path / "workspace"
    new_project(workspace)
    (workspace / "gate").mkdir()
    if file_sets:
        # Top-level keys must come before the config's tables.
        write(workspace, {"retrieval-eval.toml": FILE_KEYS + CONFIG})
    sha = commit_all(workspace, "configure")

    result = run_action(
        workspace,
        tmp_path / "run",
        event_name="push",
        payload=push_event(sha),
        api_url=github.base_url,
        sha=sha,
        github_retry_seconds="5",
        **(INPUTS if inputs_given else {}),
    )

    assert result.returncode == 0, result.log
    assert result.outputs["verdict"] == "baseline-established", result.log
    assert (workspace / baseline).is_file(), result.log
    others = {"baseline.json", "gate/from-file.json", "gate/from-input.json"} - {baseline}
    assert not [name for name in others if (workspace / name).exists()]
    assert result.outputs["report-json"] == str(workspace.resolve() / report_dir / "report.json")
    report = json.loads((workspace / report_dir / "report.json").read_text(encoding="utf-8"))
    assert report["tolerance"] == tolerance
