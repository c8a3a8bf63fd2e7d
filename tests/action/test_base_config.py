"""A pull request's gate is configured by its base commit: the configuration file is read
as it is there (git history in a real repository), whatever the pull request made of it,
and what the pull request proposes is said in one escaped line."""

from __future__ import annotations

from pathlib import Path

import pytest

from retrieval_eval.action.base_config import (
    adoption_notice,
    base_config_file,
    proposal_notice,
)
from retrieval_eval.prepare import Prepared
from retrieval_eval.settings import read_settings
from tests.action.git_repo import commit_all, init_repo, write


def no_api(path: str, sha: str) -> bytes | None:
    raise AssertionError("the history holds the base commit: the API is not asked")


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    path = tmp_path / "workspace"
    init_repo(path)
    return path


def read(
    workspace: Path, base: str, tmp_path: Path, config: Path | None = None
) -> tuple[Path, str, bool]:
    return base_config_file(
        workspace=workspace,
        config_input=config,
        base_sha=base,
        fetch_from_api=no_api,
        scratch_dir=tmp_path / "scratch",
    )


def test_the_base_commits_file_is_read_not_the_pull_requests(
    workspace: Path, tmp_path: Path
) -> None:
    write(workspace, {"retrieval-eval.toml": "tolerance = 0.05\n"})
    base = commit_all(workspace, "base")
    write(workspace, {"retrieval-eval.toml": "tolerance = 0.9\n"})
    commit_all(workspace, "the pull request loosens its gate")

    copy, origin, configured = read(workspace, base, tmp_path)
    assert copy.read_text(encoding="utf-8") == "tolerance = 0.05\n"
    assert origin == f"retrieval-eval.toml at the base commit {base[:7]}"
    assert configured


def test_a_pyproject_without_a_retrieval_eval_table_is_no_configuration(
    workspace: Path, tmp_path: Path
) -> None:
    write(workspace, {"pyproject.toml": "[project]\nname = 'notes'\n"})
    base = commit_all(workspace, "base")
    write(workspace, {"retrieval-eval.toml": "tolerance = 0.9\n"})  # added by the PR
    commit_all(workspace, "adds retrieval-eval")

    copy, origin, configured = read(workspace, base, tmp_path)
    assert copy.read_bytes() == b""
    assert origin == f"the defaults (the base commit {base[:7]} has no configuration file)"
    assert not configured


def test_a_pyproject_with_the_table_or_the_config_input_is_the_file(
    workspace: Path, tmp_path: Path
) -> None:
    write(
        workspace,
        {
            "pyproject.toml": "[tool.retrieval-eval]\ntolerance = 0.02\n",
            "ci/gate.toml": "tolerance = 0.03\n",
        },
    )
    base = commit_all(workspace, "base")
    copy, origin, _ = read(workspace, base, tmp_path)
    assert copy.name == "pyproject.toml" and b"0.02" in copy.read_bytes()
    copy, origin, _ = read(workspace, base, tmp_path, config=workspace / "ci" / "gate.toml")
    assert copy.read_text(encoding="utf-8") == "tolerance = 0.03\n"
    assert origin == f"ci/gate.toml at the base commit {base[:7]}"


def test_a_proposal_is_one_escaped_line_and_nothing_without_one(tmp_path: Path) -> None:
    settings = read_settings(workdir=tmp_path, config_file=None, overrides={})
    assert proposal_notice(Prepared(settings)) is None
    notice = proposal_notice(
        Prepared(
            settings,
            proposed=(("tolerance = 0.05", "tolerance = 0.5 <b>*@team*</b>"),),
            gate_origin="retrieval-eval.toml at the base commit abc1234",
        )
    )
    assert notice is not None and "\n" not in notice
    assert notice.endswith(
        "This run used retrieval-eval.toml at the base commit abc1234. Proposed: "
        "tolerance = 0.05 → tolerance = 0.5 &lt;b&gt;\\*@\u200bteam\\*&lt;/b&gt;."
    )
    assert "<b>" not in notice


def test_the_adoption_run_says_the_gate_starts_after_merge() -> None:
    assert adoption_notice().startswith("🌱 **This pull request adds retrieval-eval.**")
    assert adoption_notice().endswith("the gate starts after merge.")
