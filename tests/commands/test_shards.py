"""`retrieval-eval merge` through the console script: the partials of `run --shard` become
one report where --report-dir says, printed unless --quiet; a missing shard, a flag the
shards were not run with and a missing folder are errors naming what is wrong."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.author.cli import retrieval_eval
from tests.compare.conftest import Project


@pytest.fixture
def shards(tmp_path: Path) -> Project:
    project = Project(tmp_path)
    for shard in ("1/2", "2/2"):
        folder = f"s{shard[0]}"
        done = retrieval_eval("run", "--shard", shard, "--report-dir", folder, cwd=tmp_path)
        assert done.returncode == 0, done.stderr
    return project


def test_the_partials_merge_into_one_report_where_the_flag_says(shards: Project) -> None:
    root = shards.root

    printed = retrieval_eval("merge", "s1", "s2", "--report-dir", "merged", cwd=root)
    quiet = retrieval_eval("merge", "s1", "s2", "--report-dir", "merged", "--quiet", cwd=root)

    assert printed.returncode == 0, printed.stderr
    report = json.loads((root / "merged" / "report.json").read_text(encoding="utf-8"))
    assert len(report["datasets"][0]["queries"]) == 12  # 8 + 4, once each
    assert not shards.report_dir.exists()
    assert "keyword.jsonl" in printed.stdout  # report.md, stdout not being a terminal
    assert "Baseline established" in printed.stderr
    assert quiet.returncode == 0, quiet.stderr
    assert quiet.stdout == ""


def test_a_missing_shard_or_another_configuration_is_an_error(shards: Project) -> None:
    root = shards.root

    missing = retrieval_eval("merge", "s1", "--quiet", cwd=root)
    other_k = retrieval_eval("merge", "s1", "s2", "--k", "5", "--quiet", cwd=root)

    assert missing.returncode == 2
    assert "shard(s) 2/2 missing" in missing.stderr
    assert other_k.returncode == 2  # --k reaches the merge, which compares it with the shards'
    assert "s1/partial.json: made with a different configuration" in other_k.stderr
    assert not shards.baseline.exists()


def test_the_shard_folders_are_required_and_must_exist(tmp_path: Path) -> None:
    none = retrieval_eval("merge", cwd=tmp_path)
    absent = retrieval_eval("merge", "nowhere", cwd=tmp_path)

    assert none.returncode == 2
    assert "Missing argument 'SHARD_DIRS...'" in none.stderr
    assert absent.returncode == 2
    assert "Directory 'nowhere' does not exist" in absent.stderr
