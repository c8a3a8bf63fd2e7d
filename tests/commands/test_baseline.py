"""`retrieval-eval baseline update` through the console script: its flags reach the run,
it says where the baseline went, and an invalid dataset leaves the baseline alone."""

from __future__ import annotations

import json
from pathlib import Path

from tests.author.cli import retrieval_eval
from tests.compare.conftest import KEYWORD_FIXTURES, Project, write_dataset


def test_it_rewrites_the_baseline_the_flags_name_with_the_flags_settings(tmp_path: Path) -> None:
    project = Project(tmp_path)
    (tmp_path / "other.json").write_text("{ not json", encoding="utf-8")  # replaced, not read

    done = retrieval_eval(
        "baseline", "update", "--baseline", "other.json", "--k", "5", cwd=tmp_path
    )

    assert done.returncode == 0, done.stderr
    assert not project.baseline.exists()
    written = json.loads((tmp_path / "other.json").read_text(encoding="utf-8"))
    assert written["datasets"]["keyword.jsonl"]["k"] == 5  # --k over the default 10
    assert done.stderr.rstrip().endswith(f"baseline rewritten: {tmp_path / 'other.json'}")
    assert done.stdout == ""  # the report is written, not printed
    # What to commit next names the file written, not the default one.
    assert "git add other.json" in done.stderr, done.stderr
    assert "baseline.json" not in done.stderr


def test_an_invalid_dataset_exits_1_and_leaves_the_baseline(tmp_path: Path) -> None:
    project = Project(tmp_path)
    project.baseline.write_text('{"kept": true}\n', encoding="utf-8")
    write_dataset(project.datasets / "keyword.jsonl", KEYWORD_FIXTURES[:2])  # min_fixtures = 5

    done = retrieval_eval("baseline", "update", cwd=tmp_path)

    assert done.returncode == 1, done.stderr
    assert "keyword.jsonl" in done.stderr and "valid fixtures; at least 5" in done.stderr
    assert "baseline rewritten" not in done.stderr
    assert project.baseline.read_text(encoding="utf-8") == '{"kept": true}\n'


def test_a_bad_flag_is_a_usage_error_naming_it(tmp_path: Path) -> None:
    Project(tmp_path)

    unknown = retrieval_eval("baseline", "update", "--shard", "1/2", cwd=tmp_path)
    out_of_range = retrieval_eval("baseline", "update", "--k", "0", cwd=tmp_path)

    assert unknown.returncode == 2
    assert "No such option '--shard'" in unknown.stderr
    assert out_of_range.returncode == 2
    assert "'k'" in out_of_range.stderr and "greater than or equal to 1" in out_of_range.stderr
    assert not (tmp_path / "baseline.json").exists()
