"""A gate setting a pull request proposes does not change the verdict of the sharded flow.

Threat, reversed: a pull request that proposes `k = 20` (a gate setting, which takes effect
after merge) used to pass unsharded but fail in the matrix, because each shard searched
with the pull request's `k` while the merge gated with the base commit's ("made with a
different configuration"). Every mode now uses one run plan, so the shards search with the
base commit's gate settings too, and the merge gives the verdict the unsharded run gives.
"""

from __future__ import annotations

import shutil

import pytest

from tests.action.project import CONFIG
from tests.security.harness import Repo

pytestmark = pytest.mark.slow


def test_a_proposed_gate_setting_gives_the_same_verdict_sharded_and_unsharded(
    repo: Repo,
) -> None:
    main = repo.establish_baseline()
    repo.branch("feature", main)
    head = repo.commit({"retrieval-eval.toml": "k = 20\n" + CONFIG}, "propose k = 20")
    artifacts = repo.path / ".artifacts"

    whole = repo.pull_request(80, main, head, comment="off", report_dir=".artifacts/whole")
    for index in (1, 2):
        shard = repo.pull_request(
            80,
            main,
            head,
            mode="evaluate-shard",
            shard=f"{index}/2",
            report_dir=f".artifacts/work-{index}",
        )
        assert shard.returncode == 0, shard.log
        shutil.copytree(artifacts / f"work-{index}", artifacts / "partials" / f"partial-{index}")
    merged = repo.pull_request(
        80,
        main,
        head,
        mode="merge",
        shard_artifacts=".artifacts/partials",
        report_dir=".artifacts/out",
    )

    assert whole.outputs["verdict"] == "passed", whole.log
    assert merged.returncode == 0, merged.log
    assert merged.outputs["verdict"] == whole.outputs["verdict"]
    assert "k: 10 → 20" in merged.comment
