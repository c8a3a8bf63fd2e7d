"""`retrieval-eval validate` reads the configuration as every other command does: with no
PATHS it checks the configured `datasets` folder, and `min_fixtures` / `min_human` come from
the file unless a flag gives them."""

from __future__ import annotations

from pathlib import Path

from tests.support.action import run_cli
from tests.validate.dataset_builders import full_dataset


def test_no_argument_validates_the_configured_datasets(tmp_path: Path) -> None:
    full_dataset(tmp_path / "golden" / "keyword.jsonl", "keyword", count=5)
    (tmp_path / "retrieval-eval.toml").write_text(
        'datasets = "golden"\nmin_fixtures = 5\nmin_human = 5\n', encoding="utf-8"
    )
    done = run_cli(tmp_path, "validate")
    assert done.returncode == 0, done.log
    assert "ok: 1 file, 5 fixtures" in done.log


def test_the_files_minimums_apply_and_a_flag_overrides_them(tmp_path: Path) -> None:
    full_dataset(tmp_path / "datasets" / "keyword.jsonl", "keyword", count=5)
    (tmp_path / "pyproject.toml").write_text(
        "[tool.retrieval-eval]\nmin_fixtures = 6\nmin_human = 1\n", encoding="utf-8"
    )
    too_few = run_cli(tmp_path, "validate")
    assert too_few.returncode == 1, too_few.log
    assert "5 valid fixtures; at least 6 are required" in too_few.log
    assert run_cli(tmp_path, "validate", "--min-fixtures", "5").returncode == 0


def test_a_broken_configuration_is_a_file_error(tmp_path: Path) -> None:
    full_dataset(tmp_path / "datasets" / "keyword.jsonl", "keyword")
    (tmp_path / "retrieval-eval.toml").write_text("min_fixtures = -1\n", encoding="utf-8")
    done = run_cli(tmp_path, "validate", "datasets")
    assert done.returncode == 2, done.log
    assert "retrieval-eval.toml:1: bad value for 'min_fixtures'" in done.log
