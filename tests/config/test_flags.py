"""The settings flags of every command are made from the option table: what `--help`
shows through the console script is each setting's declared line and default, and a
command's own name for a setting's flag (`generate --out`) keeps the setting's help."""

from __future__ import annotations

from pathlib import Path

import pytest

from retrieval_eval.config.table import command_rows, rows
from tests.support.action import run_cli

# Every command some setting's declaration gives a flag, and its own names for flags.
COMMANDS = sorted({command for row in rows() for command in row.commands})
NAMED = {"generate": {"datasets": "--out"}}


@pytest.mark.parametrize("command", COMMANDS)
def test_each_settings_flag_shows_the_tables_line_and_default(tmp_path: Path, command: str) -> None:
    helped = run_cli(tmp_path, *command.split(), "--help")
    assert helped.returncode == 0, helped.log
    text = " ".join(helped.stdout.split())
    for row in command_rows(command):
        flag = NAMED.get(command, {}).get(row.key, row.flag)
        assert f"{flag} " in text, (flag, text)
        after = text[text.index(f"{flag} ") :]
        assert row.doc in after, (row.doc, after)
        table, _, leaf = row.key.rpartition(".")
        shown = f"[{table}] {leaf}" if table else leaf
        assert f"Default: {shown} in the config file, else" in after


def test_a_settings_flag_overrides_the_configuration_file(tmp_path: Path) -> None:
    """`import queries --corpus` sets `corpus` as `run --corpus` does: over the file's."""
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "a.md").write_text("# Alpha\n\nAlpha text.\n", encoding="utf-8")
    (tmp_path / "retrieval-eval.toml").write_text('corpus = "missing"\n', encoding="utf-8")
    (tmp_path / "log.csv").write_text("query,clicked\nalpha,a\n", encoding="utf-8")
    from_file = run_cli(tmp_path, "import", "queries", "log.csv")
    assert from_file.returncode == 2, from_file.log
    assert "missing" in from_file.stderr
    flagged = run_cli(tmp_path, "import", "queries", "log.csv", "--corpus", "notes")
    assert flagged.returncode == 0, flagged.log
    assert "1 labelled by clicks" in flagged.stdout
